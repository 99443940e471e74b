// stats.cpp: summary statistics shared by the analyses.
#include "analysis/stats.h"

#include <algorithm>
#include <bit>
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

void ValueCounts::flush() {
  if (m_pending.empty()) return;
  std::sort(m_pending.begin(), m_pending.end());
  std::vector<ValueCount> merged;
  merged.reserve(m_counts.size() + std::min<size_t>(m_pending.size(), 4096));
  auto put = [&merged](double value, uint64_t count) {
    if (!merged.empty() && merged.back().value == value)
      merged.back().count += count;
    else
      merged.push_back({value, count});
  };
  size_t old = 0;
  for (double value : m_pending) {
    while (old < m_counts.size() && m_counts[old].value < value) {
      put(m_counts[old].value, m_counts[old].count);
      ++old;
    }
    put(value, 1);
  }
  for (; old < m_counts.size(); ++old) put(m_counts[old].value, m_counts[old].count);
  m_count += m_pending.size();
  m_pending.clear();
  m_counts = std::move(merged);
  // Sort a batch at least as long as the table: the merges cost a constant per value in all.
  m_flush_at = std::max(size_t{1} << 20, m_counts.size());
}

void ValueCounts::clear() {
  m_pending.clear();
  m_pending.shrink_to_fit();
  m_counts.clear();
  m_counts.shrink_to_fit();
  m_count = 0;
  m_flush_at = size_t{1} << 20;
}

const std::vector<ValueCount>& ValueCounts::counts() {
  flush();
  return m_counts;
}

uint64_t ValueCounts::count() {
  flush();
  return m_count;
}

double ValueCounts::at(uint64_t index) {
  flush();
  uint64_t below = 0;
  for (const ValueCount& entry : m_counts) {
    below += entry.count;
    if (index < below) return entry.value;
  }
  return m_counts.empty() ? 0 : m_counts.back().value;
}

double ValueCounts::quantile(double fraction) {
  const uint64_t n = count();
  return n == 0 ? 0 : at(nearest_rank_index(n, fraction));
}

uint64_t ValueCounts::count_at_most(double limit) {
  flush();
  uint64_t count = 0;
  for (const ValueCount& entry : m_counts) {
    if (entry.value > limit) break;
    count += entry.count;
  }
  return count;
}

Summary summarize(ValueCounts& values) {
  Summary s;
  const std::vector<ValueCount>& counts = values.counts();
  s.count = values.count();
  if (s.count == 0) return s;
  long double sum = 0;
  for (const ValueCount& entry : counts)
    sum += static_cast<long double>(entry.value) * static_cast<long double>(entry.count);
  s.mean = static_cast<double>(sum / static_cast<long double>(s.count));
  if (s.count > 1) {
    long double squares = 0;
    for (const ValueCount& entry : counts) {
      const long double d = entry.value - static_cast<long double>(s.mean);
      squares += d * d * static_cast<long double>(entry.count);
    }
    s.stddev = static_cast<double>(std::sqrt(squares / static_cast<long double>(s.count - 1)));
  }
  s.min = counts.front().value;
  s.max = counts.back().value;
  s.p50 = values.quantile(0.50);
  s.p99 = values.quantile(0.99);
  return s;
}

uint64_t TwoPassSummary::bucket_of(double value) {
  // The bits of a double ordered as the values are (negative ones flipped), then their leading 24.
  const auto bits = std::bit_cast<uint64_t>(value == 0 ? 0.0 : value);
  const uint64_t ordered = bits >> 63 ? ~bits : bits | (uint64_t{1} << 63);
  return ordered >> 40;
}

void TwoPassSummary::start_second() {
  m_kept.clear();
  m_squares = 0;
  if (m_count == 0) return;
  m_mean = static_cast<double>(m_sum / static_cast<long double>(m_count));
  std::vector<std::pair<uint64_t, uint64_t>> buckets(m_buckets.begin(), m_buckets.end());
  std::sort(buckets.begin(), buckets.end());
  for (double fraction : {0.50, 0.99}) {
    const uint64_t index = nearest_rank_index(m_count, fraction);
    uint64_t below = 0;
    for (const auto& [bucket, count] : buckets) {
      if (index < below + count) {
        bool known = false;
        for (const Kept& kept : m_kept) known = known || kept.bucket == bucket;
        if (!known) {
          m_kept.push_back({bucket, below, {}});
          m_kept.back().values.reserve(count);
        }
        break;
      }
      below += count;
    }
  }
}

uint64_t TwoPassSummary::kept_count() const {
  uint64_t count = 0;
  for (const Kept& kept : m_kept) count += kept.values.capacity();
  return count;
}

double TwoPassSummary::value_at(uint64_t index) {
  for (Kept& kept : m_kept)
    if (index >= kept.below && index - kept.below < kept.values.size()) {
      const auto at = kept.values.begin() + static_cast<std::ptrdiff_t>(index - kept.below);
      std::nth_element(kept.values.begin(), at, kept.values.end());
      return *at;
    }
  return 0;
}

Summary TwoPassSummary::finish() {
  Summary s;
  s.count = m_count;
  if (m_count == 0) return s;
  s.mean = m_mean;
  if (m_count > 1)
    s.stddev = static_cast<double>(std::sqrt(m_squares / static_cast<long double>(m_count - 1)));
  s.min = m_min;
  s.max = m_max;
  s.p50 = value_at(nearest_rank_index(m_count, 0.50));
  s.p99 = value_at(nearest_rank_index(m_count, 0.99));
  return s;
}

}  // namespace ett::host
