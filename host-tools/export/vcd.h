// vcd.h: a capture as a Value Change Dump (IEEE 1364): one 1-bit wire per data line D0..D7 (a serial port:
// DCD, DSR, CTS, RI, line_names.h), one per probe
// (toggled at each of its events, so that a change to the same line values still shows) and each probe's code
// as 1-bit wires NAME_code[i], one per bit of its layout's width (GTKWave joins them into a bus; sigrok and
// PulseView read them as channels); probes carry their `ett label` names.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "analysis/capture.h"
#include "common/status.h"
#include "common/utc_time.h"
#include "export/output_file.h"

namespace ett::host {

struct VcdOptions {
  int64_t timescale_ps = 1000;  // 1 ns
  // The code bits (NAME_code[i]); false leaves them out (`--no-bus`: the lines D0..D7 hold the same bits).
  bool bus = true;
  std::span<const std::string> probe_labels;  // [probe - 1]: the probe's `ett label`, "" for none
  const TscUtcClock* utc = nullptr;           // $date is the UTC of time 0 (a PPS mapping), not the CMOS time
};

// "1ns", "10ns", "100ns", "1us", ... "100s", "1ps" ... (1, 10 or 100 of s, ms, us, ns, ps) in picoseconds.
Expected<int64_t> parse_vcd_timescale(std::string_view text);

// Times are ticks of the timescale from the capture start, shifted so that the earliest (a pretrigger event
// may be negative) is 0; the initial values are dumped at #0. Events with the same TSC (one poll) share a
// timestamp. At 1 ns or finer every poll keeps its own timestamp: one that rounds to the previous poll's tick
// (or earlier) is written one tick after it, so times strictly increase. At a coarser timescale the polls
// within one tick are merged into it (the values written are the last ones; a probe's wire toggles when it
// had an odd number of events in the tick). A final timestamp marks the capture's end (at least one tick
// after the last change).
void write_vcd(const Capture& capture, TextOut& out, const VcdOptions& options = {});

// The same VCD from events handed over a batch at a time in seq order (`ett export` streams the trace): the
// header and the initial values when made, the changes of each batch (a poll, or a tick, that goes on in the
// next batch is written with it), the end mark at finish. `probes`: the highest probe among the events (at
// least the layout's); `origin_ns`: the earliest event's time (times are ticks from min(origin_ns, 0)).
class VcdWriter {
 public:
  VcdWriter(const CaptureInfo& info, int probes, double origin_ns, TextOut& out, const VcdOptions& options);
  ~VcdWriter();
  void add(std::span<const AnalysisEvent> events);
  void finish();

 private:
  struct State;
  std::unique_ptr<State> m_state;
};
std::string export_vcd(const Capture& capture, const VcdOptions& options = {});  // the same text, whole

}  // namespace ett::host
