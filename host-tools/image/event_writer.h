// event_writer.h: writes decoded events as CSV, JSON Lines, a JSON array or an aligned table, with times in
// nanoseconds from capture start.
//
//   seq,probe,code,tsc,time_ns                                   CSV (header exactly as shown)
//   0,1,3,123456789,0
//   {"seq":0,"probe":1,"code":3,"tsc":123456789,"time_ns":0,"lines":3}      JSONL
//   [ the same objects, one a line, separated by commas ]                    JSON
//   seq  probe  code  tsc  time_ns  lines, right-aligned                     text
// A session from a serial port (with_flags) adds a last column `flags`: "short-pulse" on both edges of a
// pulse shorter than the poll step (format::kEventShortPulse; their times and the width are unknown), else
// empty ("-" in the table).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "image/event_source.h"
#include "image/trace_image.h"

namespace ett::host {

enum class EventFormat { Csv, Jsonl, Json, Text };
std::optional<EventFormat> event_format_from_name(std::string_view name);

struct EventTiming {
  uint64_t capture_start_tsc = 0;
  uint64_t hz = 0;  // the session's tsc_hz, or --cpu-hz
};

// round((tsc - capture_start_tsc) * 1e9 / hz), exact in integer arithmetic (halves round away from zero).
int64_t tsc_to_ns(uint64_t tsc, const EventTiming& timing);

// Called with the events written so far (every 64 Ki events); returning false stops the writing (an
// Interrupted error).
using WriteProgress = std::function<bool(uint64_t done)>;

// Writes the header (CSV, text) and one line per event to `out`; fails on a write error or hz == 0.
Status write_events(std::span<const Event> events, EventFormat format, const EventTiming& timing,
                    std::FILE* out, const std::string& out_name, const WriteProgress& progress = {},
                    bool with_flags = false);
// The same for events fed a block at a time (a session written as it is decoded); an error from the feed
// ends the writing with it.
Status write_events(const EventFeed& feed, EventFormat format, const EventTiming& timing, std::FILE* out,
                    const std::string& out_name, const WriteProgress& progress = {}, bool with_flags = false);

}  // namespace ett::host
