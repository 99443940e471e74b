// intervals.cpp: inter-arrival times per probe and the gaps shorter than tau.
#include "analysis/intervals.h"

#include <map>

namespace ett::host {

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns) {
  struct Probe {
    const AnalysisEvent* last = nullptr;
    std::vector<double> gaps;
    ProbeIntervals out;
  };
  std::map<uint8_t, Probe> probes;
  for (const AnalysisEvent& event : events) {
    Probe& probe = probes[event.probe];
    probe.out.probe = event.probe;
    probe.out.events++;
    if (probe.last) {
      const double gap = event.time_ns - probe.last->time_ns;
      probe.gaps.push_back(gap);
      if (tau_ns > 0 && gap < tau_ns) probe.out.close.push_back({probe.last->seq, event.seq, gap});
    }
    probe.last = &event;
  }
  IntervalsResult result;
  result.tau_ns = tau_ns;
  for (auto& [number, probe] : probes) {
    probe.out.gaps = summarize(probe.gaps);
    result.probes.push_back(std::move(probe.out));
  }
  return result;
}

}  // namespace ett::host
