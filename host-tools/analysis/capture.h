// capture.h: the in-memory capture every analysis and exporter reads: session facts and events.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tsc_time.h"

namespace ett::host {

// One decoded event. time_ns is relative to the capture start (negative for pretrigger events).
struct AnalysisEvent {
  uint64_t seq = 0;
  uint8_t probe = 0;
  uint8_t code = 0;
  uint8_t lines = 0;  // D7..D0 after the change
  uint64_t tsc = 0;
  double time_ns = 0;
};

// Takes events a batch at a time, in seq order (a trace streamed as it is read; stream_trace_events).
using EventSink = std::function<Status(std::span<const AnalysisEvent> events)>;

// One record of the session's stall table (kernel/capture/stall_log.h), in ns from the capture start: the
// loop did not poll for part of [start_ns, start_ns + length_ns]; an event stamped in it, or the first one
// after it, can be late by up to length_ns.
struct StallSpan {
  double start_ns = 0;
  double length_ns = 0;
};

// What the analyses need from a session header (the database's traces row).
struct CaptureInfo {
  int64_t trace_id = 0;
  std::string name;                // shown in reports: "trace 3 (disk NAME session 2)"
  uint64_t tsc_hz = 0;             // calibrated TSC rate; epsilon = 1 / tsc_hz
  uint64_t capture_start_tsc = 0;  // time 0
  uint64_t capture_end_tsc = 0;
  std::string mode = "capture";  // capture | calibrate | hwlat
  std::string layout = "2x4";
  int probe_count = 2;
  uint32_t probe_source = 0;  // format::ProbeSource (0: unknown); names the lines (common/line_names.h)
  uint8_t initial_lines = 0;
  std::string captured_at;        // UTC text, may be empty
  uint64_t captured_at_unix = 0;  // the same, seconds since 1970 (0: unknown)
  std::string cpu_brand;
  // The capture's own check intervals (session format 2; all 0 in older sessions and synthetic ones).
  uint64_t stall_count = 0;       // stalls seen (the table may hold fewer records: merged)
  uint64_t loop_iterations = 0;   // polls
  double longest_check_ns = 0;    // the longest interval between two stop checks (1024 polls)
  double typical_check_ns = 0;    // the shortest
  double stall_threshold_ns = 0;  // longer intervals were stalls

  // Nanoseconds from the capture start to its end (0 when the header has no end).
  double end_ns() const {
    if (tsc_hz == 0 || capture_end_tsc <= capture_start_tsc) return 0;
    return ticks_to_ns(static_cast<double>(capture_end_tsc - capture_start_tsc), tsc_hz);
  }
};

struct Capture {
  CaptureInfo info;
  std::vector<AnalysisEvent> events;  // in seq order
  std::vector<StallSpan> stalls;      // the session's stall table, in time order

  // Nanoseconds from the capture start to its end (0 when the header has no end).
  double end_ns() const { return info.end_ns(); }
};

// Probes under a layout name ("2x4" -> 2, "8x1" -> 8, "4x2" -> 4, "1x8" -> 1); 0 when unknown.
int probes_in_layout(const std::string& layout);

}  // namespace ett::host
