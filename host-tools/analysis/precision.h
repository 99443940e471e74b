// precision.h: the ETT paper's precision bound from a calibration capture: loop-step distribution,
// tau at coverage levels, epsilon = 1 / tsc_hz, pi = tau + epsilon, and the minimum safe inter-arrival time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stats.h"
#include "common/status.h"
#include "common/tsc_time.h"

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

// Where the loop-step times come from.
enum class PrecisionSource {
  Calibrate,       // every loop step of a mode=calibrate capture
  CheckIntervals,  // any capture of session format 2: its stop checks' intervals (1024 polls each)
};
const char* precision_source_name(PrecisionSource source);  // "calibrate" | "check-intervals"

// How a precision gets stored, for the messages that find none (durations, intervals, the check-interval
// estimate, the report): only `ett analyze precision` on a loaded mode=calibrate capture stores one, and
// every trace of the same CPU (cpu_vendor and cpu_brand) in that database then quotes it. A capture-time
// estimate is never stored, so sending the user to `ett analyze precision` alone would lead them in a circle.
constexpr const char* kStorePrecisionSteps =
    "capture once with the kernel argument mode=calibrate on this PC (under QEMU: `ett qemu run ... --append "
    "mode=calibrate`), `ett load` that disk into this database, then run `ett analyze precision --trace ID` "
    "on that trace: it stores the bound for every trace of the same CPU";

struct PrecisionResult {
  PrecisionSource source = PrecisionSource::Calibrate;
  uint64_t steps = 0;
  uint64_t tsc_hz = 0;
  double epsilon_ns = 0;
  int probe_count = 0;
  Summary step;  // loop-step times in ns
  std::vector<CoverageLevel> levels;
  std::vector<HistogramBin> histogram;
  // CheckIntervals: the intervals it comes from, and tau outside the stalls (the bound for events no stall
  // touches).
  double typical_check_ns = 0;
  double longest_check_ns = 0;
  double stall_threshold_ns = 0;
  uint64_t stall_count = 0;
  double tau_outside_stalls_ns = 0;
};

// Loop-step times in ns: in mode=calibrate every loop step is a record, so a step is the TSC difference
// between consecutive records, converted at the capture's TSC rate: N records give N-1 steps. The first
// record's gap since capture_start_tsc is left out: it holds the capture's set-up (the stop rules' start),
// not a loop step.
std::vector<double> loop_steps_ns(const Capture& capture);

// The same steps gathered record by record, for a caller that streams the records in seq order: counted by
// distinct value (ValueCounts), so memory grows with the distinct step lengths, not the records.
class LoopSteps {
 public:
  explicit LoopSteps(uint64_t tsc_hz) : m_tsc_hz(tsc_hz) {}
  void add(uint64_t tsc) {
    // A record at or before its predecessor (a corrupt record) is no step.
    if (m_has_previous && tsc > m_previous)
      m_steps.add(ticks_to_ns(static_cast<double>(tsc - m_previous), m_tsc_hz));
    m_previous = tsc;
    m_has_previous = true;
  }
  void clear();  // start over (a restarted stream)
  ValueCounts take() &&;

 private:
  uint64_t m_tsc_hz;
  ValueCounts m_steps;
  uint64_t m_previous = 0;
  bool m_has_previous = false;
};

// mode=calibrate: from every loop step. Any other capture that recorded its check intervals (session format
// 2): a capture-time estimate from them. A check interval is 1024 polls; the longest step of the capture is
// at most the longest interval less 1023 typical polls (the excess of the longest interval over a typical
// one, spent in one step, plus one typical poll), so tau(100 %) = longest - typical x 1023/1024, and the same
// with the stall threshold in place of the longest interval bounds every step outside the stalls. One level
// (100 %), no histogram: the intervals do not give the distribution of single steps. Errors: no TSC rate, a
// capture that is neither mode=calibrate nor has check intervals, or no steps.
Expected<PrecisionResult> analyze_precision(const Capture& capture, const PrecisionOptions& options = {});

// The check-interval estimate alone (tests).
Expected<PrecisionResult> precision_from_check_intervals(const CaptureInfo& info);

// The same from step times already in ns (tests, and captures from elsewhere).
Expected<PrecisionResult> precision_from_steps(const std::vector<double>& steps_ns, uint64_t tsc_hz,
                                               int probe_count, const PrecisionOptions& options = {});
// The same from the steps counted by value (LoopSteps).
Expected<PrecisionResult> precision_from_steps(ValueCounts& steps_ns, uint64_t tsc_hz, int probe_count,
                                               const PrecisionOptions& options = {});

}  // namespace ett::host
