// stats.cpp: summary statistics shared by the analyses.
#include "analysis/stats.h"

#include <algorithm>
#include <cmath>

namespace ett::host {

double nearest_rank(std::span<const double> sorted, double fraction) {
  if (sorted.empty()) return 0;
  // The small tolerance keeps 0.955 * 1000 = 955 from rounding up to rank 956 through binary fractions.
  double rank = std::ceil(fraction * static_cast<double>(sorted.size()) - 1e-9);
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count > 1) {
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(s.count - 1));
  }
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = nearest_rank(sorted, 0.50);
  s.p99 = nearest_rank(sorted, 0.99);
  return s;
}

}  // namespace ett::host
