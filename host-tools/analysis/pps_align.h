// pps_align.h: captures of several measurement PCs that each took a PPS line (`ett analyze pps` stored their
// TSC-to-UTC mappings) aligned through UTC, without a sync wire between them: each capture's clock against
// the reference's, t_ref = offset + slope * t, a merged timeline, and how far the mappings disagree on the
// pulses of the same UTC seconds.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/align.h"
#include "analysis/capture.h"
#include "analysis/output.h"
#include "analysis/pps.h"
#include "common/status.h"

namespace ett::host {

struct PpsClockMap {
  size_t capture = 0;  // index into the captures given
  double offset_ns = 0;
  double slope = 1;
  double drift_ppm = 0;   // (slope - 1) * 1e6
  size_t seconds = 0;     // UTC seconds with a pulse in this capture and in the reference
  double mean_ns = 0;     // disagreement: this capture's UTC of a pulse minus the reference's, same second
  double p50_abs_ns = 0;  // |disagreement|
  double p99_abs_ns = 0;
  double max_abs_ns = 0;
  double uncertainty_ns = 0;  // from the two fits' rate uncertainties over the common span

  LinearClock clock() const { return {offset_ns, slope}; }
};

struct PpsAlignResult {
  std::vector<PpsClockMap> maps;  // one per capture; the reference's is the identity
  MergedTimeline timeline;        // every event of every capture, by reference time
};

// `mappings[k]` is the stored mapping of `captures[k]`; each needs its UTC label. Errors: fewer than two
// captures, a mapping without UTC labels.
Expected<PpsAlignResult> align_by_pps(std::span<const Capture> captures, std::span<const PpsResult> mappings);

// text: one line per capture; csv: the merged timeline with each event's UTC (time_utc, from its own
// capture's mapping), written a range of rows at a time from the captures' events; json: the maps. The
// report refers to all four arguments.
Report pps_align_report(const PpsAlignResult& result, std::span<const Capture> captures,
                        std::span<const PpsResult> mappings, std::span<const int64_t> trace_ids,
                        OutputFormat format);
// The same as one text.
std::string format_pps_align(const PpsAlignResult& result, std::span<const Capture> captures,
                             std::span<const PpsResult> mappings, std::span<const int64_t> trace_ids,
                             OutputFormat format);

}  // namespace ett::host
