// stall_marks.cpp: which events a capture's stalls touch (the rule is in the header).
#include "analysis/stall_marks.h"

#include <algorithm>
#include <cmath>

namespace ett::host {

StallMarks::Builder::Builder(std::span<const StallSpan> stalls) {
  for (const StallSpan& stall : stalls)
    if (stall.length_ns > 0 && !std::isnan(stall.start_ns))  // else it touches nothing
      m_stalls.push_back(stall);
  std::stable_sort(m_stalls.begin(), m_stalls.end(),
                   [](const StallSpan& a, const StallSpan& b) { return a.start_ns < b.start_ns; });
}

bool StallMarks::Builder::mark(const AnalysisEvent& event) {
  // A stall opens at the first event at or after its start, and closes after marking the first event past
  // its window's end.
  for (; m_next < m_stalls.size() && m_stalls[m_next].start_ns <= event.time_ns; ++m_next)
    m_open.push_back(m_stalls[m_next]);
  bool touched = false;  // as StallMarks::touched reads the marks: by a stall of some length
  for (size_t i = 0; i < m_open.size();) {
    const StallSpan& stall = m_open[i];
    m_touched.push_back({event.seq, stall.length_ns});
    touched |= stall.length_ns > 0;
    if (event.time_ns > stall.start_ns + stall.length_ns) {
      m_open[i] = m_open.back();
      m_open.pop_back();
    } else {
      ++i;
    }
  }
  return touched;
}

StallMarks StallMarks::Builder::finish() && {
  // One mark per event, the longest stall touching it.
  std::sort(m_touched.begin(), m_touched.end(), [](const Touched& a, const Touched& b) {
    return a.seq != b.seq ? a.seq < b.seq : a.stall_ns > b.stall_ns;
  });
  m_touched.erase(std::unique(m_touched.begin(), m_touched.end(),
                              [](const Touched& a, const Touched& b) { return a.seq == b.seq; }),
                  m_touched.end());
  StallMarks marks;
  marks.m_touched = std::move(m_touched);
  return marks;
}

StallMarks::StallMarks(std::span<const StallSpan> stalls, std::span<const AnalysisEvent> events) {
  Builder builder(stalls);
  for (const AnalysisEvent& event : events) builder.add(event);
  *this = std::move(builder).finish();
  m_events = events;
}

double StallMarks::stall_ns(uint64_t seq) const {
  auto it = std::lower_bound(m_touched.begin(), m_touched.end(), seq,
                             [](const Touched& t, uint64_t s) { return t.seq < s; });
  return it != m_touched.end() && it->seq == seq ? it->stall_ns : 0;
}

}  // namespace ett::host
