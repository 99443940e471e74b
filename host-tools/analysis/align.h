// align.h: synchronized captures from several measurement PCs that share a sync line on one probe:
// each capture's clock is fitted against the reference (the first) by least squares over the sync edges,
// t_ref = offset + slope * t, and all events are merged into one timeline in the reference's time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "common/status.h"

namespace ett::host {

struct ClockFit {
  size_t capture = 0;  // index into the captures given
  size_t edges = 0;    // sync edges used (the k-th edge of each capture are the same physical edge)
  double offset_ns = 0;
  double slope = 1;
  double drift_ppm = 0;  // (slope - 1) * 1e6
  double offset_stderr_ns = 0;
  double slope_stderr = 0;
  double rms_residual_ns = 0;
  double max_abs_residual_ns = 0;
  std::vector<double> residuals_ns;  // t_ref - fitted, per edge
  // Edges a stall touches in this capture or the reference (StallMarks): their residual is not bounded by pi.
  std::vector<bool> edge_stalled;
  size_t stalled_edges = 0;
};

// A capture's clock on the reference's: t_ref = offset_ns + slope * t.
struct LinearClock {
  double offset_ns = 0;
  double slope = 1;
  double reference_ns(double time_ns) const { return offset_ns + slope * time_ns; }
};

// One event of a merged timeline: which capture, which of its events. Its time on the reference clock is
// that capture's LinearClock of the event's time (8 bytes per event where the event and its time took 48: the
// rows are written from the captures' own events).
struct MergedRef {
  uint32_t capture = 0;
  uint32_t event = 0;
};

// Every event of some captures in the order of one stable sort of all of them (capture 0's first, each in its
// own order) by reference time, walked rather than held: each walk merges the captures' next events from the
// marks (where each capture stood every kStride events) that make() found (a binary search each for two
// captures, one merge pass for more). A timeline of 10 M events from two captures keeps 40 KB of marks where
// a vector of them took 80 MB of memory touched for the first time, and two threads can each write their rows
// of it. It refers to the captures' events: they outlive it.
class MergedTimeline {
 public:
  static constexpr size_t kStride = 4096;

  MergedTimeline() = default;
  // Linear time when each capture's events are in time order already (a stable sort of that capture's order
  // when not), clocks[k] mapping capture k's times. Errors: more than 2^32 - 1 captures or events in one
  // capture, or not one clock per capture.
  static Expected<MergedTimeline> make(std::span<const Capture> captures,
                                       std::span<const LinearClock> clocks);

  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  // Calls visit(MergedRef) for the events [begin, end) of the timeline, in order.
  template <typename Visit>
  void walk(size_t begin, size_t end, const Visit& visit) const {
    end = std::min(end, m_size);
    if (begin >= end) return;
    const size_t mark = begin / kStride;
    const size_t sources = m_sources.size();
    std::vector<size_t> next(m_marks.begin() + static_cast<std::ptrdiff_t>(mark * sources),
                             m_marks.begin() + static_cast<std::ptrdiff_t>((mark + 1) * sources));
    for (size_t at = mark * kStride; at < end; ++at) {
      const size_t best = pick(next);
      if (at >= begin) visit(MergedRef{static_cast<uint32_t>(best), m_sources[best].at(next[best])});
      ++next[best];
    }
  }
  // All of it (tests, and timelines small enough to hold).
  std::vector<MergedRef> refs() const;

 private:
  struct Source {
    std::span<const AnalysisEvent> events;
    LinearClock clock;
    std::vector<uint32_t> order;  // empty: the events' own order
    uint32_t at(size_t k) const { return order.empty() ? static_cast<uint32_t>(k) : order[k]; }
    double time(size_t k) const { return clock.reference_ns(events[at(k)].time_ns); }
  };
  // The capture whose next event comes first (the lowest on a tie); one with events left.
  size_t pick(std::span<const size_t> next) const {
    size_t best = m_sources.size();
    double best_time = 0;
    for (size_t i = 0; i < m_sources.size(); ++i) {
      const Source& source = m_sources[i];
      if (next[i] == source.events.size()) continue;
      const double time = source.time(next[i]);
      if (best == m_sources.size() || time < best_time) {
        best = i;
        best_time = time;
      }
    }
    return best;
  }

  std::vector<Source> m_sources;
  std::vector<size_t> m_marks;  // [m * sources + k]: capture k's next event at timeline event m * kStride
  size_t m_size = 0;
};

struct AlignResult {
  uint8_t sync_probe = 0;
  std::vector<ClockFit> fits;  // one per capture; the reference's is the identity
  MergedTimeline timeline;     // every event of every capture, by reference time (when kept)
  size_t merged_events = 0;    // how many: the timeline's length, also when it is not kept

  LinearClock clock(size_t capture) const { return {fits[capture].offset_ns, fits[capture].slope}; }
};

// Errors: fewer than two captures, or a capture with fewer than 3 sync edges or a different number of sync
// edges than the reference (the edges are paired by their order).
// Every fit flags the sync edges a stall of its capture or of the reference touches (the captures' stalls).
// keep_timeline false: the fits and the count of merged events only (no pass over the events to merge them).
Expected<AlignResult> align_captures(std::span<const Capture> captures, uint8_t sync_probe,
                                     bool keep_timeline = true);

}  // namespace ett::host
