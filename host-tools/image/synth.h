// synth.h: realistic synthetic captures (request/response traffic on the probes) for `ett synth`,
// the database tests and the load benchmark.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ett/trace_format.h"

namespace ett::host {

struct SynthOptions {
  uint64_t events = 0;
  uint64_t seed = 1;
  format::Layout layout = format::Layout::Double2x4;
  // Now and then while generating: "generating" and how many events are made; then once "writing", 0 before
  // the session is written.
  std::function<void(const char* step, uint64_t done)> progress;
  // The same events stamped by a TSC this many parts per million fast (negative: slow) against the one of
  // clock_ppm 0, calibrated to the same rate: a second capture of the same lines by another machine, for
  // `ett analyze align`.
  double clock_ppm = 0;
};

struct SynthCapture {
  uint64_t tsc_hz = 0;
  uint64_t capture_start_tsc = 0;
  uint8_t initial_lines = 0;
  std::vector<format::EventRecord> records;
};

// The same options give the same capture. Traffic: a client on probe 1 sends requests (a new code each time),
// the server answers on the next probe after a log-normal service time; now and then both change in the same
// poll (one timestamp, probe order). Gaps between requests are exponential. With more than two probes, the
// pairs rotate over them.
SynthCapture synth_capture(const SynthOptions& options);

struct SynthWritten {
  uint32_t session = 0;
  bool created_disk = false;
  uint64_t events = 0;
};

// Appends synth_capture(options) as a new session of the trace disk at `path`, creating an image file big
// enough for it when `path` does not exist.
Expected<SynthWritten> write_synth_capture(const std::string& path, const SynthOptions& options);

}  // namespace ett::host
