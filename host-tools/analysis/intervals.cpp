// intervals.cpp: inter-arrival times per probe and the gaps shorter than tau.
#include "analysis/intervals.h"

#include <map>

#include "common/on_threads.h"

namespace ett::host {

IntervalsResult analyze_intervals(std::span<const AnalysisEvent> events, double tau_ns) {
  struct Probe {
    const AnalysisEvent* last = nullptr;
    std::vector<double> gaps;
    ProbeIntervals out;
  };
  std::vector<Probe> probes(256);  // by probe number: no map lookup per event
  {
    std::vector<size_t> counts(probes.size());  // each probe's gaps in one allocation, never grown
    for (const AnalysisEvent& event : events) ++counts[event.probe];
    for (size_t i = 0; i < probes.size(); ++i)
      if (counts[i] > 1) probes[i].gaps.reserve(counts[i] - 1);
  }
  for (const AnalysisEvent& event : events) {
    Probe& probe = probes[event.probe];
    probe.out.probe = event.probe;
    if (probe.out.events++ == 0) probe.out.first_tsc = event.tsc;
    probe.out.last_tsc = event.tsc;
    if (probe.last) {
      const double gap = event.time_ns - probe.last->time_ns;
      probe.gaps.push_back(gap);
      if (tau_ns > 0 && gap < tau_ns)
        probe.out.close.push_back({probe.last->seq, event.seq, probe.last->tsc, event.tsc, gap});
    }
    probe.last = &event;
  }
  // The probes' summaries (a selection among each one's gaps: most of the work after the read) on threads of
  // their own, one per probe with events.
  std::vector<Probe*> present;
  for (Probe& probe : probes)
    if (probe.out.events) present.push_back(&probe);
  for_each_on_threads(present.size(), [&present](size_t i) {
    present[i]->out.gaps = summarize(std::move(present[i]->gaps));
  });
  IntervalsResult result;
  result.tau_ns = tau_ns;
  for (Probe* probe : present) result.probes.push_back(std::move(probe->out));
  return result;
}

void mark_stalls(IntervalsResult& result, std::span<const AnalysisEvent> events, const StallMarks& marks,
                 size_t stall_count) {
  result.stall_count = stall_count;
  std::map<uint8_t, size_t> last;  // probe -> index of its previous event
  std::map<uint8_t, ProbeIntervals*> by_probe;
  for (ProbeIntervals& p : result.probes) {
    p.stalled = 0;
    by_probe[p.probe] = &p;
  }
  if (marks.touched_events() == 0) {  // no stall touches any event: no walk over them
    for (ProbeIntervals& p : result.probes)
      for (CloseEvent& c : p.close) c.stall = false;
    return;
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const uint8_t probe = events[i].probe;
    auto previous = last.find(probe);
    if (previous != last.end() && (marks.stall_at(previous->second) > 0 || marks.stall_at(i) > 0)) {
      if (auto p = by_probe.find(probe); p != by_probe.end()) ++p->second->stalled;
    }
    last[probe] = i;
  }
  for (ProbeIntervals& p : result.probes)
    for (CloseEvent& c : p.close) c.stall = marks.touched(c.previous_seq) || marks.touched(c.seq);
}

}  // namespace ett::host
