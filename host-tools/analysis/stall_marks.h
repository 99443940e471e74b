// stall_marks.h: the capture's own stalls (its session's stall table) and the events they touch.
//
// A stall record is a check interval of the capture loop that was longer than the loop can take without one
// (kernel/capture/stall_log.h): the loop did not poll for part of it, so an event that happened then was
// stamped late, by up to the stall's length. An event is touched by a stall when its stamp lies inside the
// record's window [start, start + length], or when it is the first event after that window (the conservative
// reading: the window is where the loop noticed the stall). For such an event the loop-step bound pi does not
// hold; pi + the stall's length does.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/capture.h"

namespace ett::host {

class StallMarks {
  struct Touched {
    uint64_t seq;
    double stall_ns;
  };

 public:
  // Marks events handed over one at a time in seq order (which is time order): a reader that streams the
  // trace need not hold its events to know which ones a stall touches.
  class Builder {
   public:
    explicit Builder(std::span<const StallSpan> stalls);
    // Returns whether a stall touches the event (known as it comes: no later event changes it).
    bool add(const AnalysisEvent& event) {
      if (m_next < m_stalls.size() || !m_open.empty()) return mark(event);
      return false;
    }
    StallMarks finish() &&;

   private:
    bool mark(const AnalysisEvent& event);
    std::vector<StallSpan> m_stalls;  // those that can touch an event, by start
    size_t m_next = 0;                // the first not yet open
    std::vector<StallSpan> m_open;    // opened by an event at or after their start, not yet closed
    std::vector<Touched> m_touched;   // in seq order, a seq once per stall touching it
  };

  StallMarks() = default;
  StallMarks(std::span<const StallSpan> stalls, std::span<const AnalysisEvent> events);

  // The length of the longest stall touching the event with sequence number `seq` (0: none; also for a seq
  // that is not an event of the capture).
  double stall_ns(uint64_t seq) const;
  bool touched(uint64_t seq) const { return stall_ns(seq) > 0; }
  // The same by the event's index in the events given (only for marks made from a span of events).
  double stall_at(size_t index) const { return m_touched.empty() ? 0 : stall_ns(m_events[index].seq); }
  size_t touched_events() const { return m_touched.size(); }

 private:
  std::span<const AnalysisEvent> m_events;
  // Only the touched events, by seq: stalls are rare, and a mark per event cost 8 bytes of fresh memory for
  // each of millions of events.
  std::vector<Touched> m_touched;
};

}  // namespace ett::host
