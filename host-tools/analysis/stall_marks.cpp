// stall_marks.cpp: which events a capture's stalls touch (the rule is in the header).
#include "analysis/stall_marks.h"

#include <algorithm>

namespace ett::host {

StallMarks::StallMarks(std::span<const StallSpan> stalls, std::span<const AnalysisEvent> events)
    : m_events(events) {
  // Events are in seq order, which is time order; stalls are in time order too, but nothing relies on it.
  auto by_time = [](const AnalysisEvent& event, double t) { return event.time_ns < t; };
  for (const StallSpan& stall : stalls) {
    if (!(stall.length_ns > 0)) continue;  // touches nothing: no event is late by it
    const double end = stall.start_ns + stall.length_ns;
    auto it = std::lower_bound(events.begin(), events.end(), stall.start_ns, by_time);
    for (; it != events.end(); ++it) {
      m_touched.push_back({static_cast<size_t>(it - events.begin()), stall.length_ns});
      if (it->time_ns > end) break;  // the first event after the window: marked, and the last one
    }
  }
  // One mark per event, the longest stall touching it.
  std::sort(m_touched.begin(), m_touched.end(), [](const Touched& a, const Touched& b) {
    return a.index != b.index ? a.index < b.index : a.stall_ns > b.stall_ns;
  });
  m_touched.erase(std::unique(m_touched.begin(), m_touched.end(),
                              [](const Touched& a, const Touched& b) { return a.index == b.index; }),
                  m_touched.end());
}

double StallMarks::stall_at(size_t index) const {
  auto it = std::lower_bound(m_touched.begin(), m_touched.end(), index,
                             [](const Touched& t, size_t i) { return t.index < i; });
  return it != m_touched.end() && it->index == index ? it->stall_ns : 0;
}

double StallMarks::stall_ns(uint64_t seq) const {
  if (m_touched.empty()) return 0;
  auto it = std::lower_bound(m_events.begin(), m_events.end(), seq,
                             [](const AnalysisEvent& event, uint64_t s) { return event.seq < s; });
  if (it == m_events.end() || it->seq != seq) return 0;
  return stall_at(static_cast<size_t>(it - m_events.begin()));
}

}  // namespace ett::host
