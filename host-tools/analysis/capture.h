// capture.h: the in-memory capture every analysis and exporter reads: session facts and events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  uint8_t initial_lines = 0;
  std::string captured_at;  // UTC text, may be empty
  std::string cpu_brand;
};

struct Capture {
  CaptureInfo info;
  std::vector<AnalysisEvent> events;  // in seq order

  // Nanoseconds from the capture start to its end (0 when the header has no end).
  double end_ns() const {
    if (info.tsc_hz == 0 || info.capture_end_tsc <= info.capture_start_tsc) return 0;
    return ticks_to_ns(static_cast<double>(info.capture_end_tsc - info.capture_start_tsc), info.tsc_hz);
  }
};

// Probes under a layout name ("2x4" -> 2, "8x1" -> 8, "4x2" -> 4, "1x8" -> 1); 0 when unknown.
int probes_in_layout(const std::string& layout);

}  // namespace ett::host
