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

// The intervals of events handed over a batch at a time in seq order, twice (a reader that streams the trace
// twice need not hold its events), each one a stall of the capture touches (either of its events: StallMarks)
// counted per probe and its close event flagged. Each probe's gap summary comes from a TwoPassSummary: memory
// grows with the close events, not with the events.
class IntervalsBuilder {
 public:
  IntervalsBuilder(double tau_ns, std::span<const StallSpan> stalls);
  void add(std::span<const AnalysisEvent> events);  // the first pass
  // The second pass over the same events: start_second once, then add_second for every batch again.
  void start_second();
  void add_second(std::span<const AnalysisEvent> events);
  // The probes' summaries.
  IntervalsResult finish(size_t stall_count) &&;

 private:
  struct Probe {
    bool any = false;  // an event came
    uint64_t last_seq = 0, last_tsc = 0;
    double last_ns = 0;
    bool last_touched = false;  // a stall touches the probe's last event
    bool any_second = false;    // the second pass: an event came
    double last_second_ns = 0;
    TwoPassSummary gaps;
    ProbeIntervals out;
  };
  double m_tau_ns;
  StallMarks::Builder m_stalls;
  std::vector<Probe> m_probes;  // by probe number: no map lookup per event
};

// The same over a whole capture's events.
IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns,
                                  std::span<const StallSpan> stalls = {}, size_t stall_count = 0);

}  // namespace ett::host
