// intervals.cpp: inter-arrival times per probe and the gaps shorter than tau.
#include "analysis/intervals.h"

namespace ett::host {

IntervalsBuilder::IntervalsBuilder(double tau_ns, std::span<const StallSpan> stalls)
    : m_tau_ns(tau_ns), m_stalls(stalls), m_probes(256) {}

void IntervalsBuilder::add(std::span<const AnalysisEvent> events) {
  for (const AnalysisEvent& event : events) {
    const bool touched = m_stalls.add(event);
    Probe& probe = m_probes[event.probe];
    probe.out.probe = event.probe;
    if (probe.out.events++ == 0) probe.out.first_tsc = event.tsc;
    probe.out.last_tsc = event.tsc;
    if (probe.any) {
      const double gap = event.time_ns - probe.last_ns;
      probe.gaps.add_first(gap);
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
}

void IntervalsBuilder::start_second() {
  for (Probe& probe : m_probes) {
    probe.any_second = false;
    if (probe.out.events) probe.gaps.start_second();
  }
}

void IntervalsBuilder::add_second(std::span<const AnalysisEvent> events) {
  for (const AnalysisEvent& event : events) {
    Probe& probe = m_probes[event.probe];
    if (probe.any_second) probe.gaps.add_second(event.time_ns - probe.last_second_ns);
    probe.any_second = true;
    probe.last_second_ns = event.time_ns;
  }
}

IntervalsResult IntervalsBuilder::finish(size_t stall_count) && {
  IntervalsResult result;
  result.tau_ns = m_tau_ns;
  result.stall_count = stall_count;
  for (Probe& probe : m_probes) {
    if (!probe.out.events) continue;
    probe.out.gaps = probe.gaps.finish();
    result.probes.push_back(std::move(probe.out));
  }
  return result;
}

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns,
                                  std::span<const StallSpan> stalls, size_t stall_count) {
  IntervalsBuilder builder(tau_ns, stalls);
  builder.add(events);
  builder.start_second();
  builder.add_second(events);
  return std::move(builder).finish(stall_count);
}

}  // namespace ett::host
