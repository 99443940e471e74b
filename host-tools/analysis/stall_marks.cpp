// stall_marks.cpp: which events a capture's stalls touch (the rule is in the header).
#include "analysis/stall_marks.h"

#include <algorithm>

namespace ett::host {

StallMarks::StallMarks(std::span<const StallSpan> stalls, std::span<const AnalysisEvent> events)
    : m_events(events), m_stall_ns(events.size(), 0.0) {
  // Events are in seq order, which is time order; stalls are in time order too, but nothing relies on it.
  auto by_time = [](const AnalysisEvent& event, double t) { return event.time_ns < t; };
  for (const StallSpan& stall : stalls) {
    const double end = stall.start_ns + stall.length_ns;
    auto it = std::lower_bound(events.begin(), events.end(), stall.start_ns, by_time);
    for (; it != events.end(); ++it) {
      double& mark = m_stall_ns[static_cast<size_t>(it - events.begin())];
      mark = std::max(mark, stall.length_ns);
      if (it->time_ns > end) break;  // the first event after the window: marked, and the last one
    }
  }
  m_touched = static_cast<size_t>(
      std::count_if(m_stall_ns.begin(), m_stall_ns.end(), [](double v) { return v > 0; }));
}

double StallMarks::stall_ns(uint64_t seq) const {
  auto it = std::lower_bound(m_events.begin(), m_events.end(), seq,
                             [](const AnalysisEvent& event, uint64_t s) { return event.seq < s; });
  if (it == m_events.end() || it->seq != seq) return 0;
  return m_stall_ns[static_cast<size_t>(it - m_events.begin())];
}

}  // namespace ett::host
