// align.h: synchronized captures from several measurement PCs that share a sync line on one probe:
// each capture's clock is fitted against the reference (the first) by least squares over the sync edges,
// t_ref = offset + slope * t, and all events are merged into one timeline in the reference's time.
#pragma once

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

struct AlignResult {
  uint8_t sync_probe = 0;
  std::vector<ClockFit> fits;       // one per capture; the reference's is the identity
  std::vector<MergedRef> timeline;  // every event of every capture, by reference time (when kept)
  size_t merged_events = 0;         // how many: the timeline's length, also when it is not kept

  LinearClock clock(size_t capture) const { return {fits[capture].offset_ns, fits[capture].slope}; }
};

// Every event of `captures` in the order of one stable sort of all of them (capture 0's first, each in its
// own order) by reference time, clocks[k] mapping capture k's times: in linear time when each capture's
// events are in time order already (a stable sort of that capture's order when not), the captures' next
// events merged. Errors: more than 2^32 - 1 captures or events in one capture.
Expected<std::vector<MergedRef>> merge_timeline(std::span<const Capture> captures,
                                                std::span<const LinearClock> clocks);

// Errors: fewer than two captures, or a capture with fewer than 3 sync edges or a different number of sync
// edges than the reference (the edges are paired by their order).
// keep_timeline false: the fits and the count of merged events only (the timeline of 10 M events is 80 MB).
Expected<AlignResult> align_captures(std::span<const Capture> captures, uint8_t sync_probe,
                                     bool keep_timeline = true);

// Flags in every fit the sync edges a stall of that capture or of the reference touches.
void mark_stalls(AlignResult& result, std::span<const Capture> captures);

}  // namespace ett::host
