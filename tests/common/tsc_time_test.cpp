// tsc_time_test.cpp: the inline rounding of times against the library's llround.
#include "common/tsc_time.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace ett::host {
namespace {

// Halves, the doubles next to them, the largest double below one half, integers near 2^52 (where doubles stop
// having fractions) and 2^62 (where the fallback begins), and random values over every magnitude.
TEST(TscTime, RoundToInt64IsLlround) {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                -0.5,
                                1.5,
                                -1.5,
                                2.5,
                                -2.5,
                                0.49999999999999994,
                                -0.49999999999999994,
                                4503599627370495.5,
                                -4503599627370495.5,
                                4503599627370497.0,
                                0x1p62,
                                -0x1p62,
                                0x1p62 - 512,
                                1e18,
                                -1e18};
  for (double half = 0.5; half < 1e17; half = half * 3 + 0.5) {
    values.push_back(half);
    values.push_back(std::nextafter(half, 0.0));
    values.push_back(std::nextafter(half, 1e300));
    values.push_back(-half);
  }
  std::mt19937_64 random(11);
  for (int i = 0; i < 200000; ++i) {
    const double value = std::bit_cast<double>(random());
    if (std::isfinite(value) && std::fabs(value) < 0x1p63) values.push_back(value);
    values.push_back(static_cast<double>(static_cast<int64_t>(random() >> (random() % 64))) / 64.0 -
                     static_cast<double>(random() % 1000));
  }
  for (double value : values) ASSERT_EQ(round_to_int64(value), std::llround(value)) << value;
}

}  // namespace
}  // namespace ett::host
