// stats.cpp: summary statistics shared by the analyses.
#include "analysis/stats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

namespace ett::host {

double nearest_rank(std::span<const double> sorted, double fraction) {
  if (sorted.empty()) return 0;
  // The small tolerance keeps 0.955 * 1000 = 955 from rounding up to rank 956 through binary fractions.
  double rank = std::ceil(fraction * static_cast<double>(sorted.size()) - 1e-9);
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

void sort_values(std::vector<double>& values) {
  // Small inputs: the comparison sort is quicker than eight passes of buckets.
  if (values.size() < 4096) {
    std::sort(values.begin(), values.end());
    return;
  }
  // LSD radix sort on keys that order like the doubles: negative values have every bit flipped, the others
  // their sign bit. A byte that is the same in every key needs no pass (the high bytes, often).
  const size_t n = values.size();
  std::vector<uint64_t> keys(n), scratch(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = std::bit_cast<uint64_t>(values[i]);
    keys[i] = (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
  }
  std::array<std::array<size_t, 256>, 8> counts{};
  for (uint64_t key : keys)
    for (int byte = 0; byte < 8; ++byte) ++counts[byte][(key >> (8 * byte)) & 0xFF];
  for (int byte = 0; byte < 8; ++byte) {
    std::array<size_t, 256>& count = counts[byte];
    if (std::find(count.begin(), count.end(), n) != count.end()) continue;
    size_t offset = 0;
    for (size_t& c : count) offset += std::exchange(c, offset);
    for (uint64_t key : keys) scratch[count[(key >> (8 * byte)) & 0xFF]++] = key;
    keys.swap(scratch);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = keys[i];
    values[i] = std::bit_cast<double>((key >> 63) ? key & ~(uint64_t{1} << 63) : ~key);
  }
}

Summary summarize(std::span<const double> values) {
  return summarize(std::vector<double>(values.begin(), values.end()));
}

Summary summarize(std::vector<double>&& values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted = std::move(values);
  sort_values(sorted);
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
