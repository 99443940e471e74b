// stats.h: summary statistics shared by the analyses (count, mean, stddev, nearest-rank percentiles).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
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

struct ValueCount {
  double value = 0;
  uint64_t count = 0;
};

// Values counted by distinct value, for the analyses that stream a capture: loop steps and inter-arrival
// gaps are differences of integer TSC ticks, so they repeat, and memory grows with the distinct values (16
// bytes each, plus a buffer of pending values at most as long as the table or 1 M) instead of the values
// themselves. Values come in any order; the answers are exactly those of the same values held whole
// (summarize, QuantileSelector): the same min, max, count and nearest-rank quantiles, the mean and spread
// summed in extended precision. Values must not be NaN.
class ValueCounts {
 public:
  void add(double value) {
    m_pending.push_back(value);
    if (m_pending.size() >= m_flush_at) flush();
  }
  void clear();
  // The distinct values ascending with how often each came.
  const std::vector<ValueCount>& counts();
  uint64_t count();
  // The value at `index` of ascending order (index < count()).
  double at(uint64_t index);
  double quantile(double fraction);  // nearest rank, as QuantileSelector::quantile
  uint64_t count_at_most(double limit);

 private:
  void flush();
  std::vector<double> m_pending;
  std::vector<ValueCount> m_counts;  // ascending, distinct
  uint64_t m_count = 0;              // in m_counts
  size_t m_flush_at = size_t{1} << 20;
};

Summary summarize(ValueCounts& values);

// The Summary of values read twice (a trace streamed twice), in memory that does not grow with them: the
// first pass counts them per bucket of their leading 24 bits (sign, exponent, 12 bits of mantissa: a bucket
// spans 1/4096 of its values' magnitude) and sums them; the second keeps only the values of the buckets that
// hold the quantiles' ranks (a few thousand of 10^8 for a smooth distribution) and sums their squared
// deviations. The result is that of summarize() over the same values in the same order, to the bit (the
// sums are taken in the same order; the quantiles are the same order statistics).
class TwoPassSummary {
 public:
  void add_first(double value) {
    ++m_count;
    m_sum += value;
    if (m_count == 1 || value < m_min) m_min = value;
    if (m_count == 1 || value > m_max) m_max = value;
    const uint64_t bucket = bucket_of(value);
    if (bucket != m_last_bucket || m_last == nullptr) {
      m_last = &m_buckets[bucket];
      m_last_bucket = bucket;
    }
    ++*m_last;
  }
  // Between the passes: the buckets whose values the second pass keeps.
  void start_second();
  void add_second(double value) {
    const long double d = value - static_cast<long double>(m_mean);
    m_squares += d * d;
    const uint64_t bucket = bucket_of(value);
    for (Kept& kept : m_kept)
      if (kept.bucket == bucket) kept.values.push_back(value);
  }
  Summary finish();
  // The values the second pass keeps (after start_second).
  uint64_t kept_count() const;

 private:
  static uint64_t bucket_of(double value);
  struct Kept {
    uint64_t bucket = 0;
    uint64_t below = 0;  // values in lower buckets
    std::vector<double> values;
  };
  double value_at(uint64_t index);
  std::unordered_map<uint64_t, uint64_t> m_buckets;
  uint64_t* m_last = nullptr;
  uint64_t m_last_bucket = 0;
  uint64_t m_count = 0;
  long double m_sum = 0, m_squares = 0;
  double m_min = 0, m_max = 0, m_mean = 0;
  std::vector<Kept> m_kept;
};

}  // namespace ett::host
