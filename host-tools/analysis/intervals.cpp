// intervals.cpp: inter-arrival times per probe and the gaps shorter than tau.
#include "analysis/intervals.h"

#include "common/on_threads.h"
#include "common/reserve_hint.h"

namespace ett::host {

IntervalsBuilder::IntervalsBuilder(double tau_ns, std::span<const StallSpan> stalls,
                                   std::span<const uint64_t> probe_events)
    : m_tau_ns(tau_ns), m_stalls(stalls), m_probes(256) {
  for (size_t i = 0; i < probe_events.size() && i < m_probes.size(); ++i) {
    if (probe_events[i] <= 1) continue;
    std::vector<double>& gaps = m_probes[i].gaps;
    reserve_hint(gaps, probe_events[i] - 1);
    m_probes[i].fault_ahead = FaultAhead::of_block(gaps.data(), gaps.capacity() * sizeof(double));
  }
}

void IntervalsBuilder::fault_ahead_filled() {
  for (Probe& probe : m_probes)
    FaultAhead::follow(probe.fault_ahead, probe.gaps.data(), probe.gaps.size() * sizeof(double));
}

void IntervalsBuilder::add(std::span<const AnalysisEvent> events) {
  for (const AnalysisEvent& event : events) {
    const bool touched = m_stalls.add(event);
    Probe& probe = m_probes[event.probe];
    probe.out.probe = event.probe;
    if (probe.out.events++ == 0) probe.out.first_tsc = event.tsc;
    probe.out.last_tsc = event.tsc;
    if (probe.any) {
      const double gap = event.time_ns - probe.last_ns;
      probe.gaps.push_back(gap);
      const bool stalled = touched || probe.last_touched;
      probe.out.stalled += stalled;
      if (m_tau_ns > 0 && gap < m_tau_ns)
        probe.out.close.push_back({probe.last_seq, event.seq, probe.last_tsc, event.tsc, gap, stalled});
    }
    probe.any = true;
    probe.last_seq = event.seq;
    probe.last_tsc = event.tsc;
    probe.last_ns = event.time_ns;
    probe.last_touched = touched;
  }
  fault_ahead_filled();
}

IntervalsResult IntervalsBuilder::finish(size_t stall_count) && {
  std::vector<Probe*> present;
  for (Probe& probe : m_probes) {
    probe.fault_ahead.reset();
    if (probe.out.events) present.push_back(&probe);
  }
  for_each_on_threads(present.size(), [&present](size_t i) {
    present[i]->out.gaps = summarize(std::move(present[i]->gaps));
  });
  IntervalsResult result;
  result.tau_ns = m_tau_ns;
  result.stall_count = stall_count;
  for (Probe* probe : present) result.probes.push_back(std::move(probe->out));
  return result;
}

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns,
                                  std::span<const StallSpan> stalls, size_t stall_count) {
  std::vector<uint64_t> counts(256);  // each probe's gaps in one allocation, never grown
  for (const AnalysisEvent& event : events) ++counts[event.probe];
  IntervalsBuilder builder(tau_ns, stalls, counts);
  builder.add(events);
  return std::move(builder).finish(stall_count);
}

}  // namespace ett::host
