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
// The same over values the caller gives up: sorted in place, without a copy of millions of them.
Summary summarize(std::vector<double>&& values);

// Sorts ascending, as std::sort would (NaN aside), in linear time: a radix sort once there are thousands of
// values (10 M durations or loop steps sorted in a fraction of std::sort's time).
void sort_values(std::vector<double>& values);

// Nearest-rank quantile of sorted values: sorted[ceil(fraction * n) - 1] (the first value for fraction 0).
double nearest_rank(std::span<const double> sorted, double fraction);

}  // namespace ett::host
