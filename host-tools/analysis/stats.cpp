// stats.cpp: summary statistics shared by the analyses.
#include "analysis/stats.h"

#include <algorithm>
#include <cmath>

namespace ett::host {

size_t nearest_rank_index(size_t n, double fraction) {
  if (n == 0) return 0;
  // The small tolerance keeps 0.955 * 1000 = 955 from rounding up to rank 956 through binary fractions.
  const double rank = std::ceil(fraction * static_cast<double>(n) - 1e-9);
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return std::min(index, n - 1);
}

double nearest_rank(std::span<const double> sorted, double fraction) {
  return sorted.empty() ? 0 : sorted[nearest_rank_index(sorted.size(), fraction)];
}

double QuantileSelector::at(size_t index) {
  // Values before a fixed index are <= its value and values after it >= (what nth_element leaves), so the
  // value wanted lies between the fixed neighbours around it and only that stretch needs a selection.
  const auto next = std::lower_bound(m_fixed.begin(), m_fixed.end(), index);
  if (next != m_fixed.end() && *next == index) return m_values[index];
  const size_t begin = next == m_fixed.begin() ? 0 : *(next - 1) + 1;
  const size_t end = next == m_fixed.end() ? m_values.size() : *next;
  std::nth_element(m_values.begin() + static_cast<std::ptrdiff_t>(begin),
                   m_values.begin() + static_cast<std::ptrdiff_t>(index),
                   m_values.begin() + static_cast<std::ptrdiff_t>(end));
  m_fixed.insert(next, index);
  return m_values[index];
}

double QuantileSelector::quantile(double fraction) {
  return m_values.empty() ? 0 : at(nearest_rank_index(m_values.size(), fraction));
}

size_t QuantileSelector::count_at_most(double limit) const {
  size_t count = 0;
  for (double v : m_values) count += v <= limit;
  return count;
}

Summary summarize(std::span<const double> values) {
  return summarize(std::vector<double>(values.begin(), values.end()));
}

Summary summarize(std::vector<double>&& values) {
  std::vector<double> owned = std::move(values);
  QuantileSelector selector(owned);
  return summarize(selector);
}

Summary summarize(QuantileSelector& selector) {
  const std::span<const double> values = selector.values();
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  // Sums in extended precision: the mean and spread come out the same to the printed digits whatever order
  // the values are in.
  long double sum = 0;
  double min = values[0], max = values[0];
  for (double v : values) {
    sum += v;
    min = std::min(min, v);
    max = std::max(max, v);
  }
  s.mean = static_cast<double>(sum / static_cast<long double>(s.count));
  if (s.count > 1) {
    long double squares = 0;
    for (double v : values) {
      const long double d = v - static_cast<long double>(s.mean);
      squares += d * d;
    }
    s.stddev = static_cast<double>(std::sqrt(squares / static_cast<long double>(s.count - 1)));
  }
  s.min = min;
  s.max = max;
  s.p50 = selector.quantile(0.50);
  s.p99 = selector.quantile(0.99);
  return s;
}

}  // namespace ett::host
