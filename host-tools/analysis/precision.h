// precision.h: the ETT paper's precision bound from a calibration capture: loop-step distribution,
// tau at coverage levels, epsilon = 1 / tsc_hz, pi = tau + epsilon, and the minimum safe inter-arrival time.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stats.h"
#include "common/status.h"

namespace ett::host {

// The paper's table (section 5): tau covering 95.5 %, 99.7 % and 100 % of the loop steps.
inline const std::vector<double> kDefaultCoverages = {0.955, 0.997, 1.0};

struct PrecisionOptions {
  std::vector<double> coverages = kDefaultCoverages;
  // Histogram bins of equal width between the shortest step and the 99.7 % quantile; the steps past it (an
  // emulator stall or an SMI can be 10^4 times the typical step) share one tail bin, so the typical ones stay
  // visible.
  int bins = 40;
};

struct CoverageLevel {
  double coverage = 0;        // 0.955
  double tau_ns = 0;          // the shortest step time at or below which this fraction of steps lie
  double epsilon_ns = 0;      // clock granularity: one TSC tick
  double pi_ns = 0;           // precision bound: tau + epsilon (also the ± bound of a duration)
  uint64_t steps_within = 0;  // steps <= tau
  // A probe loses no event when its events are at least tau apart (section 4.3). One poll reads all eight
  // lines, so the bound is the same for every probe.
  double min_interarrival_ns = 0;
};

struct HistogramBin {
  double lo_ns = 0;  // [lo, hi)
  double hi_ns = 0;  // the last bin includes hi
  uint64_t count = 0;
  bool tail = false;  // the open-ended last bin: the steps past the 99.7 % quantile, up to the longest
};

struct PrecisionResult {
  uint64_t steps = 0;
  uint64_t tsc_hz = 0;
  double epsilon_ns = 0;
  int probe_count = 0;
  Summary step;  // loop-step times in ns
  std::vector<CoverageLevel> levels;
  std::vector<HistogramBin> histogram;
};

// Loop-step times in TSC ticks: in mode=calibrate every loop step is a record, so a step is the TSC
// difference between consecutive records: N records give N-1 steps. The first record's gap since
// capture_start_tsc is left out: it holds the capture's set-up (the stop rules' start), not a loop step.
std::vector<uint64_t> loop_steps_ticks(const Capture& capture);

// Errors: no TSC rate, a capture that is not mode=calibrate, or no steps.
Expected<PrecisionResult> analyze_precision(const Capture& capture, const PrecisionOptions& options = {});

// The same from step times already in ns (tests, and captures from elsewhere).
Expected<PrecisionResult> precision_from_steps(std::vector<double> steps_ns, uint64_t tsc_hz, int probe_count,
                                               const PrecisionOptions& options = {});

}  // namespace ett::host
