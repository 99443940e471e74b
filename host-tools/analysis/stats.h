// stats.h: summary statistics shared by the analyses (count, mean, stddev, nearest-rank percentiles).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace ett::host {

struct Summary {
  size_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two values
  double min = 0;
  double p50 = 0;  // nearest-rank percentiles: the smallest value with at least p % of values at or below it
  double p99 = 0;
  double max = 0;
};

Summary summarize(std::span<const double> values);
// The same over values the caller gives up: reordered in place, without a copy of millions of them.
Summary summarize(std::vector<double>&& values);

// The index in ascending order of the nearest-rank quantile of n values: ceil(fraction * n) - 1 (0 for
// fraction 0).
size_t nearest_rank_index(size_t n, double fraction);

// Nearest-rank quantile of sorted values: sorted[nearest_rank_index(n, fraction)].
double nearest_rank(std::span<const double> sorted, double fraction);

// Nearest-rank quantiles of values it may reorder, without sorting them: each answer puts one value where a
// sort would (std::nth_element between the nearest positions already fixed), so a few quantiles of 10 M
// values cost a few linear passes instead of a sort. Values must not be NaN.
class QuantileSelector {
 public:
  explicit QuantileSelector(std::span<double> values) : m_values(values) {}

  double quantile(double fraction);
  // The value at `index` of ascending order.
  double at(size_t index);
  // How many values are <= limit.
  size_t count_at_most(double limit) const;
  std::span<const double> values() const { return m_values; }

 private:
  std::span<double> m_values;
  std::vector<size_t> m_fixed;  // ascending indices whose value is in its sorted place
};

// The summary of a selector's values (their order changed; its later quantiles reuse the work).
Summary summarize(QuantileSelector& values);

}  // namespace ett::host
