// intervals.h: inter-arrival statistics per probe, and the events that came closer than tau
// (where the capture loop may have lost an event: ETT paper, section 4.3).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stall_marks.h"
#include "analysis/stats.h"

namespace ett::host {

struct CloseEvent {
  uint64_t previous_seq = 0;
  uint64_t seq = 0;
  uint64_t previous_tsc = 0, tsc = 0;  // the two events' stamps (their UTC under `--time utc`)
  double gap_ns = 0;
  bool stall = false;  // a stall of the capture touches one of the two events (StallMarks)
};

struct ProbeIntervals {
  uint8_t probe = 0;
  uint64_t events = 0;
  uint64_t first_tsc = 0, last_tsc = 0;  // the probe's first and last events
  Summary gaps;                          // ns between consecutive events of this probe
  std::vector<CloseEvent> close;         // gaps < tau
  uint64_t stalled = 0;  // intervals one of whose events a stall touches: pi does not bound them
};

struct IntervalsResult {
  double tau_ns = 0;         // 0: no threshold, no close events
  int64_t tau_trace_id = 0;  // the calibration capture tau was measured on (0: given by hand, or none)
  std::vector<ProbeIntervals> probes;  // ascending probe number, only probes with events
  size_t stall_count = 0;              // stalls of the capture
};

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns);

// Counts per probe the intervals a stall touches (either event; `marks` made over the same `events`) and
// flags the close events it touches.
void mark_stalls(IntervalsResult& result, std::span<const AnalysisEvent> events, const StallMarks& marks,
                 size_t stall_count);

}  // namespace ett::host
