// align.h: synchronized captures from several measurement PCs that share a sync line on one probe:
// each capture's clock is fitted against the reference (the first) by least squares over the sync edges,
// t_ref = offset + slope * t, and all events are merged into one timeline in the reference's time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "common/status.h"
#include "common/utc_time.h"

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

struct MergedEvent {
  size_t capture = 0;
  AnalysisEvent event;
  double ref_time_ns = 0;  // the event's time on the reference clock
};

struct AlignResult {
  uint8_t sync_probe = 0;
  std::vector<ClockFit> fits;         // one per capture; the reference's is the identity
  std::vector<MergedEvent> timeline;  // every event of every capture, by reference time (when kept)
  size_t merged_events = 0;           // how many: the timeline's length, also when it is not kept
  // `--time utc`: the UTC of each timeline event's reference time (through the reference's PPS mapping); the
  // CSV and JSON timeline then have time_utc. Empty: no UTC.
  std::vector<UtcNs> utc;
};

// Errors: fewer than two captures, or a capture with fewer than 3 sync edges or a different number of sync
// edges than the reference (the edges are paired by their order).
// keep_timeline false: the fits and the count of merged events only (the timeline of 10 M events is 480 MB).
Expected<AlignResult> align_captures(std::span<const Capture> captures, uint8_t sync_probe,
                                     bool keep_timeline = true);

// Flags in every fit the sync edges a stall of that capture or of the reference touches.
void mark_stalls(AlignResult& result, std::span<const Capture> captures);

}  // namespace ett::host
