// compare.cpp: bootstrap comparison of two sets of action durations, and the regression gate.
#include "analysis/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

#include "analysis/stats.h"

namespace ett::host {

const char* compare_stat_name(CompareStat stat) {
  switch (stat) {
    case CompareStat::Median:
      return "median";
    case CompareStat::P90:
      return "p90";
    case CompareStat::P99:
      return "p99";
    case CompareStat::Mean:
      return "mean";
  }
  return "?";
}

Expected<CompareStat> parse_compare_stat(std::string_view text) {
  for (CompareStat stat : kCompareStats)
    if (text == compare_stat_name(stat)) return stat;
  return make_error(ErrorKind::Usage, fmt::format("--stat '{}': expected median, p90, p99 or mean", text));
}

Expected<RegressionLimit> parse_regression_limit(std::string_view text) {
  const std::string_view original = text;
  auto bad = [&] {
    return make_error(
        ErrorKind::Usage,
        fmt::format("--max-regression '{}': expected a percentage (5%) or a time (250ns, 3us, 1.5ms)",
                    original));
  };
  struct Unit {
    std::string_view suffix;
    double scale;  // to ns, or to a fraction for %
    bool relative;
  };
  constexpr Unit kUnits[] = {
      {"%", 0.01, true}, {"ns", 1, false}, {"us", 1e3, false}, {"ms", 1e6, false}, {"s", 1e9, false}};
  for (const Unit& unit : kUnits) {
    if (!text.ends_with(unit.suffix)) continue;
    const std::string_view number = text.substr(0, text.size() - unit.suffix.size());
    double value = 0;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
        !std::isfinite(value) || value < 0)
      return bad();
    return RegressionLimit{unit.relative, value * unit.scale};
  }
  return bad();
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Faster:
      return "faster";
    case Verdict::Same:
      return "no change";
    case Verdict::Slower:
      return "slower";
  }
  return "?";
}

const char* gate_decision_name(GateDecision decision) {
  switch (decision) {
    case GateDecision::Pass:
      return "pass";
    case GateDecision::Regression:
      return "regression";
    case GateDecision::Undecided:
      return "undecided";
  }
  return "?";
}

namespace {

// The statistic of already sorted values.
double sorted_statistic(CompareStat stat, std::span<const double> sorted) {
  switch (stat) {
    case CompareStat::Median:
      return nearest_rank(sorted, 0.50);
    case CompareStat::P90:
      return nearest_rank(sorted, 0.90);
    case CompareStat::P99:
      return nearest_rank(sorted, 0.99);
    case CompareStat::Mean: {
      double sum = 0;
      for (double v : sorted) sum += v;
      return sorted.empty() ? 0 : sum / static_cast<double>(sorted.size());
    }
  }
  return 0;
}

// Empirical quantile of sorted bootstrap values (linear interpolation between order statistics).
double quantile(std::span<const double> sorted, double fraction) {
  if (sorted.empty()) return 0;
  const double position = fraction * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] * (1 - weight) + sorted[above] * weight;
}

// One side's values ranked once, and a bootstrap resample of them held as how many times it drew each rank:
// the resample in ascending order is sorted[k] repeated counts[k] times, so a resample costs its draws and
// one walk, where sorting it cost n log n (81 s for 100 resamples of 5 M durations). The draws are the ones a
// resample of the values themselves takes, in the same order, so the statistics are the same to the bit.
class RankedResample {
 public:
  explicit RankedResample(std::span<const double> values)
      : m_sorted(values.size()), m_rank(values.size()), m_counts(values.size()) {
    std::vector<uint32_t> order(values.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return values[a] < values[b]; });
    for (size_t k = 0; k < order.size(); ++k) {
      m_sorted[k] = values[order[k]];
      m_rank[order[k]] = static_cast<uint32_t>(k);
    }
  }

  // A new resample: values.size() draws with replacement.
  void draw(std::mt19937_64& random) {
    std::uniform_int_distribution<size_t> pick(0, m_rank.size() - 1);
    std::fill(m_counts.begin(), m_counts.end(), 0);
    for (size_t i = 0; i < m_rank.size(); ++i) ++m_counts[m_rank[pick(random)]];
  }

  // The resample's statistic, as sorted_statistic of the resample sorted.
  double statistic(CompareStat stat) const {
    const size_t n = m_rank.size();
    if (n == 0) return 0;
    if (stat == CompareStat::Mean) {
      double sum = 0;  // in ascending order, each value as often as drawn: the sum of the sorted resample
      for (size_t k = 0; k < n; ++k)
        for (uint32_t c = 0; c < m_counts[k]; ++c) sum += m_sorted[k];
      return sum / static_cast<double>(n);
    }
    const double fraction = stat == CompareStat::Median ? 0.50 : stat == CompareStat::P90 ? 0.90 : 0.99;
    const size_t position = nearest_rank_index(n, fraction);
    size_t seen = 0;
    for (size_t k = 0; k < n; ++k) {
      seen += m_counts[k];
      if (seen > position) return m_sorted[k];
    }
    return m_sorted.back();
  }

 private:
  std::vector<double> m_sorted;    // the values in ascending order
  std::vector<uint32_t> m_rank;    // m_rank[i]: where values[i] stands in m_sorted
  std::vector<uint32_t> m_counts;  // the current resample's draws of each rank
};

// BootstrapMethod::OrderStatistics: a resample's statistics drawn from their sampling distributions, without
// drawing its values.
class OrderStatisticResample {
 public:
  explicit OrderStatisticResample(std::span<const double> values) : m_sorted(values.begin(), values.end()) {
    std::sort(m_sorted.begin(), m_sorted.end());
    const size_t n = m_sorted.size();
    if (n == 0) return;
    long double sum = 0;
    for (double v : m_sorted) sum += v;
    const long double mean = sum / static_cast<long double>(n);
    long double squares = 0;
    for (double v : m_sorted) squares += (v - mean) * (v - mean);
    m_mean = static_cast<double>(mean);
    m_mean_spread = static_cast<double>(std::sqrt(squares / static_cast<long double>(n))) /
                    std::sqrt(static_cast<double>(n));
  }

  void draw(std::mt19937_64& random) {
    const size_t n = m_sorted.size();
    if (n == 0) return;
    for (size_t s = 0; s < std::size(kCompareStats); ++s) {
      const CompareStat stat = kCompareStats[s];
      if (stat == CompareStat::Mean) {
        m_values[s] = m_mean + m_mean_spread * std::normal_distribution<double>(0, 1)(random);
        continue;
      }
      const double fraction = stat == CompareStat::Median ? 0.50 : stat == CompareStat::P90 ? 0.90 : 0.99;
      const double k = static_cast<double>(nearest_rank_index(n, fraction) + 1);  // 1-based rank
      // U ~ Beta(k, n - k + 1) as G1 / (G1 + G2), G1 ~ Gamma(k), G2 ~ Gamma(n - k + 1).
      const double g1 = std::gamma_distribution<double>(k, 1)(random);
      const double g2 = std::gamma_distribution<double>(static_cast<double>(n) - k + 1, 1)(random);
      const double u = g1 / (g1 + g2);
      const auto rank = static_cast<size_t>(u * static_cast<double>(n));
      m_values[s] = m_sorted[std::min(rank, n - 1)];
    }
  }

  double statistic(CompareStat stat) const {
    return m_values[static_cast<size_t>(std::find(std::begin(kCompareStats), std::end(kCompareStats), stat) -
                                        std::begin(kCompareStats))];
  }

 private:
  std::vector<double> m_sorted;
  double m_mean = 0, m_mean_spread = 0;
  double m_values[std::size(kCompareStats)] = {};
};

// The differences of each statistic (kCompareStats order) over the resamples of a Resample type.
template <typename Resample>
void bootstrap(const CompareSide& baseline, const CompareSide& candidate, const CompareOptions& options,
               std::vector<double> (&differences)[std::size(kCompareStats)]) {
  std::mt19937_64 random(options.seed);
  Resample b(baseline.durations_ns), c(candidate.durations_ns);
  for (uint32_t r = 0; r < options.resamples; ++r) {
    b.draw(random);
    c.draw(random);
    for (size_t s = 0; s < std::size(kCompareStats); ++s)
      differences[s].push_back(c.statistic(kCompareStats[s]) - b.statistic(kCompareStats[s]));
    if (options.on_resample) options.on_resample(r + 1);
  }
}

Status check_options(const CompareOptions& options) {
  if (!(options.confidence > 0.5 && options.confidence < 1))
    return make_error(
        ErrorKind::Usage,
        fmt::format("--confidence {}: expected a value between 0.5 and 1 (e.g. 0.95)", options.confidence));
  if (options.resamples < 100)
    return make_error(ErrorKind::Usage, fmt::format("--resamples {}: at least 100", options.resamples));
  if (!(options.pi_ns >= 0) || !std::isfinite(options.pi_ns))
    return make_error(ErrorKind::Usage, "the precision bound pi must be a finite value >= 0");
  return {};
}

// Usage error when the bootstrap over `values` durations would exceed kMaxResampledDurations.
Status check_bootstrap_work(size_t values, const CompareOptions& options) {
  const uint64_t work = uint64_t{options.resamples} * values;
  if (work <= kMaxResampledDurations) return {};
  return make_error(ErrorKind::Usage,
                    fmt::format("--resamples {} over {} durations draws {} values; at most {} (lower "
                                "--resamples to {} or fewer)",
                                options.resamples, values, work, kMaxResampledDurations,
                                std::max<uint64_t>(kMaxResampledDurations / std::max<size_t>(values, 1), 1)));
}

// Too little data to decide: why, or "" when there is enough.
std::string lack_of_data(const CompareSide& side, const char* name, const CompareOptions& options) {
  const size_t total = side.durations_ns.size() + side.stalled;
  if (side.durations_ns.size() < options.min_actions)
    return fmt::format(
        "the {} has {} usable actions ({} left out as touching a stall); at least {} are needed", name,
        side.durations_ns.size(), side.stalled, options.min_actions);
  if (total > 0 &&
      static_cast<double>(side.stalled) > options.max_stalled_fraction * static_cast<double>(total))
    return fmt::format(
        "{} of the {}'s {} actions touch a stall (more than {:.0f} %): its timing is not trustworthy",
        side.stalled, name, total, options.max_stalled_fraction * 100);
  return "";
}

}  // namespace

double compare_statistic(CompareStat stat, std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted_statistic(stat, sorted);
}

Expected<CompareResult> compare_durations(const CompareSide& baseline, const CompareSide& candidate,
                                          const CompareOptions& options) {
  ETT_TRY(check_options(options));
  CompareResult result;
  result.baseline = {baseline.durations_ns.size(), baseline.stalled};
  result.candidate = {candidate.durations_ns.size(), candidate.stalled};
  result.gate.stat = options.gate_stat;
  std::string lack = lack_of_data(baseline, "baseline", options);
  if (lack.empty()) lack = lack_of_data(candidate, "candidate", options);
  if (!lack.empty()) {
    result.gate.decision = GateDecision::Undecided;
    result.gate.reason = lack;
    return result;
  }

  // Every statistic from the same resamples.
  constexpr size_t kStats = std::size(kCompareStats);
  std::vector<double> differences[kStats];
  for (auto& d : differences) d.reserve(options.resamples);
  const bool draws =
      options.bootstrap == BootstrapMethod::Draws ||
      (options.bootstrap == BootstrapMethod::Auto &&
       uint64_t{options.resamples} * (baseline.durations_ns.size() + candidate.durations_ns.size()) <=
           kMaxResampledDurations);
  if (draws)
    bootstrap<RankedResample>(baseline, candidate, options, differences);
  else
    bootstrap<OrderStatisticResample>(baseline, candidate, options, differences);
  for (size_t s = 0; s < kStats; ++s) {
    StatComparison row;
    row.stat = kCompareStats[s];
    row.baseline_ns = compare_statistic(row.stat, baseline.durations_ns);
    row.candidate_ns = compare_statistic(row.stat, candidate.durations_ns);
    row.difference_ns = row.candidate_ns - row.baseline_ns;
    std::sort(differences[s].begin(), differences[s].end());
    row.lower_ns = quantile(differences[s], 1 - options.confidence);
    row.upper_ns = quantile(differences[s], options.confidence);
    row.verdict = row.lower_ns > options.pi_ns    ? Verdict::Slower
                  : row.upper_ns < -options.pi_ns ? Verdict::Faster
                                                  : Verdict::Same;
    result.stats.push_back(row);
  }

  const StatComparison& gated = result.stats[static_cast<size_t>(
      std::find(std::begin(kCompareStats), std::end(kCompareStats), options.gate_stat) -
      std::begin(kCompareStats))];
  const double limit = options.limit.relative ? options.limit.value * gated.baseline_ns : options.limit.value;
  result.gate.limit_ns = std::max(limit, options.pi_ns);
  result.gate.lower_ns = gated.lower_ns;
  const std::string limit_text =
      options.limit.relative ? fmt::format("{:.3g} % of the baseline's {} = {:.1f} ns",
                                           options.limit.value * 100, compare_stat_name(gated.stat), limit)
                             : fmt::format("{:.1f} ns", limit);
  const std::string allowed =
      limit >= options.pi_ns
          ? limit_text
          : fmt::format("pi = {:.1f} ns (the limit, {}, is below it)", options.pi_ns, limit_text);
  if (gated.lower_ns > result.gate.limit_ns) {
    result.gate.decision = GateDecision::Regression;
    result.gate.reason = fmt::format(
        "the candidate's {} is slower by at least {:.1f} ns with {:.3g} % confidence, more than {}",
        compare_stat_name(gated.stat), gated.lower_ns, options.confidence * 100, allowed);
  } else {
    result.gate.decision = GateDecision::Pass;
    result.gate.reason = fmt::format(
        "with {:.3g} % confidence the candidate's {} is not slower by more than {} (lower bound of the "
        "difference: {:.1f} ns)",
        options.confidence * 100, compare_stat_name(gated.stat), allowed, gated.lower_ns);
  }
  return result;
}

Expected<FitComparison> compare_fits(std::span<const double> baseline_x, std::span<const double> baseline_y,
                                     std::span<const double> candidate_x, std::span<const double> candidate_y,
                                     FitMethod method, const CompareOptions& options) {
  ETT_TRY(check_options(options));
  FitComparison result;
  result.method = method;
  ETT_TRY_ASSIGN(result.baseline, fit_line(method, baseline_x, baseline_y));
  ETT_TRY_ASSIGN(result.candidate, fit_line(method, candidate_x, candidate_y));
  ETT_TRY(check_bootstrap_work(baseline_x.size() + candidate_x.size(), options));
  std::vector<double> intercepts, slopes;
  std::mt19937_64 random(options.seed);
  std::vector<double> bx, by, cx, cy;
  auto draw = [&](std::span<const double> x, std::span<const double> y, std::vector<double>& ox,
                  std::vector<double>& oy) {
    std::uniform_int_distribution<size_t> pick(0, x.size() - 1);
    ox.resize(x.size());
    oy.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t k = pick(random);
      ox[i] = x[k];
      oy[i] = y[k];
    }
  };
  for (uint32_t r = 0; r < options.resamples; ++r) {
    draw(baseline_x, baseline_y, bx, by);
    draw(candidate_x, candidate_y, cx, cy);
    auto b = fit_line(method, bx, by);
    auto c = fit_line(method, cx, cy);
    if (options.on_resample) options.on_resample(r + 1);
    if (!b || !c) continue;  // a resample with a single size: no line (rare; it only thins the bootstrap)
    intercepts.push_back(c->intercept_ns - b->intercept_ns);
    slopes.push_back(c->slope_ns - b->slope_ns);
  }
  if (intercepts.size() < options.resamples / 2)
    return make_error(ErrorKind::Usage, "too few resamples could be fitted: the sizes vary too little");
  std::sort(intercepts.begin(), intercepts.end());
  std::sort(slopes.begin(), slopes.end());
  result.parameters.push_back({"intercept_ns", result.baseline.intercept_ns, result.candidate.intercept_ns,
                               result.candidate.intercept_ns - result.baseline.intercept_ns,
                               quantile(intercepts, 1 - options.confidence),
                               quantile(intercepts, options.confidence)});
  result.parameters.push_back({"slope_ns", result.baseline.slope_ns, result.candidate.slope_ns,
                               result.candidate.slope_ns - result.baseline.slope_ns,
                               quantile(slopes, 1 - options.confidence),
                               quantile(slopes, options.confidence)});
  return result;
}

}  // namespace ett::host
