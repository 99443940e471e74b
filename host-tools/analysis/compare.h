// compare.h: is a candidate slower than a baseline? The durations of the same actions in two sets of captures
// (repeated trials per side, as in the NCUBE timing study), compared per statistic with bootstrap confidence
// bounds, and a gate for CI jobs.
//
// For each statistic (median, p90, p99, mean) the difference is candidate - baseline. Its bounds come from a
// percentile bootstrap: both sides are resampled with replacement `resamples` times (std::mt19937_64 from
// `seed`, so a run is reproducible) and the statistic's difference is taken each time. The lower bound is the
// (1 - confidence) quantile of those differences and the upper bound the confidence quantile: each bound on
// its own holds with the stated confidence (together they are a 2 * confidence - 1 two-sided interval).
//
// Differences within ±pi (the captures' precision bound) are not differences: a statistic is "slower" only
// when its lower bound exceeds pi, "faster" only when its upper bound is below -pi.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/durations.h"
#include "analysis/fit.h"
#include "common/status.h"

namespace ett::host {

enum class CompareStat { Median, P90, P99, Mean };
inline constexpr CompareStat kCompareStats[] = {CompareStat::Median, CompareStat::P90, CompareStat::P99,
                                                CompareStat::Mean};
const char* compare_stat_name(CompareStat stat);
Expected<CompareStat> parse_compare_stat(std::string_view text);  // median | p90 | p99 | mean

// --max-regression: "5%" (of the baseline's statistic) or an absolute time ("250ns", "3us", "1.5ms").
struct RegressionLimit {
  bool relative = true;
  double value = 0.05;  // a fraction when relative, else ns
};
Expected<RegressionLimit> parse_regression_limit(std::string_view text);

// The bootstrap's work, at most, for a resampling that draws every value: resamples x (baseline + candidate
// durations) values drawn (about a few minutes on one core). Beyond it compare_durations draws each
// resample's statistics from their sampling distributions (BootstrapMethod::OrderStatistics), whose cost
// does not grow with the durations; compare_fits, which must draw the pairs, refuses it before it starts.
inline constexpr uint64_t kMaxResampledDurations = 4'000'000'000;

// How compare_durations resamples.
enum class BootstrapMethod {
  Auto,  // Draws up to kMaxResampledDurations drawn values, OrderStatistics beyond
  // Each resample draws n values with replacement (counted by rank: no sort), and its statistics are taken.
  Draws,
  // Each resample's statistics drawn from the distributions they have under Draws: the k-th smallest of n
  // draws is the value at rank floor(U n) of the sorted values, U ~ Beta(k, n - k + 1) (exact); the mean of
  // n draws is normal with the values' mean and their (population) variance / n (the central limit theorem,
  // used from 2 M durations a side up, where it is closer than the bootstrap's own Monte Carlo error). A
  // resample costs a few random numbers whatever n is.
  OrderStatistics,
};

struct CompareOptions {
  uint32_t resamples = 2000;
  // Called after each resample with the number done (a progress line); may be empty.
  std::function<void(uint32_t done)> on_resample;
  uint64_t seed = 1;
  double confidence = 0.95;
  double pi_ns = 0;  // differences within ±pi are not differences (0: unknown)
  CompareStat gate_stat = CompareStat::Median;
  RegressionLimit limit;
  size_t min_actions = 20;            // per side, after stalled actions are left out; fewer: undecided
  double max_stalled_fraction = 0.5;  // of a side's actions; more: undecided
  BootstrapMethod bootstrap = BootstrapMethod::Auto;
};

enum class Verdict { Faster, Same, Slower };
const char* verdict_name(Verdict verdict);

struct StatComparison {
  CompareStat stat = CompareStat::Median;
  double baseline_ns = 0;
  double candidate_ns = 0;
  double difference_ns = 0;  // candidate - baseline
  double lower_ns = 0;       // bounds on the difference, each at the stated confidence
  double upper_ns = 0;
  Verdict verdict = Verdict::Same;
};

// One side's durations and how many of its actions were left out.
struct CompareSide {
  std::vector<double> durations_ns;
  size_t stalled = 0;  // actions touching a stall, left out
};

enum class GateDecision { Pass, Regression, Undecided };
const char* gate_decision_name(GateDecision decision);

struct GateResult {
  GateDecision decision = GateDecision::Undecided;
  CompareStat stat = CompareStat::Median;
  double limit_ns = 0;  // the regression allowed: the limit, but never below pi
  double lower_ns = 0;  // the lower bound of the statistic's difference
  std::string reason;   // one sentence
};

struct SideSummary {
  size_t actions = 0;  // compared
  size_t stalled = 0;  // left out
};

struct CompareResult {
  SideSummary baseline;
  SideSummary candidate;
  std::vector<StatComparison> stats;  // in kCompareStats order; empty when undecided for lack of data
  GateResult gate;
};

// Compares one group of actions (all sizes together, or one size).
Expected<CompareResult> compare_durations(const CompareSide& baseline, const CompareSide& candidate,
                                          const CompareOptions& options);

// The value of `stat` over `values` (nearest-rank percentiles, as the other analyses).
double compare_statistic(CompareStat stat, std::span<const double> values);

// With --size-of-code: the fitted line of each side and bounds on the difference of its parameters, from the
// same bootstrap (each resample fitted with the chosen method).
struct ParameterComparison {
  const char* name = "";  // "intercept_ns" | "slope_ns"
  double baseline = 0;
  double candidate = 0;
  double difference = 0;
  double lower = 0;
  double upper = 0;
};
struct FitComparison {
  FitMethod method = FitMethod::Linear;
  LinearFit baseline;
  LinearFit candidate;
  std::vector<ParameterComparison> parameters;  // intercept, slope
};
// x: sizes, y: durations, per side.
Expected<FitComparison> compare_fits(std::span<const double> baseline_x, std::span<const double> baseline_y,
                                     std::span<const double> candidate_x, std::span<const double> candidate_y,
                                     FitMethod method, const CompareOptions& options);

}  // namespace ett::host
