// intervals.h: inter-arrival statistics per probe, and the events that came closer than tau
// (where the capture loop may have lost an event: ETT paper, section 4.3).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stats.h"

namespace ett::host {

struct CloseEvent {
  uint64_t previous_seq = 0;
  uint64_t seq = 0;
  double gap_ns = 0;
};

struct ProbeIntervals {
  uint8_t probe = 0;
  uint64_t events = 0;
  Summary gaps;                   // ns between consecutive events of this probe
  std::vector<CloseEvent> close;  // gaps < tau
};

struct IntervalsResult {
  double tau_ns = 0;         // 0: no threshold, no close events
  int64_t tau_trace_id = 0;  // the calibration capture tau was measured on (0: given by hand, or none)
  std::vector<ProbeIntervals> probes;  // ascending probe number, only probes with events
};

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns);

}  // namespace ett::host
