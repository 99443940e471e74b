// decimals_test.cpp: write_fixed writes what fmt's "{:.Nf}" writes, for doubles of every kind and magnitude.
#include "common/decimals.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ett::host {
namespace {

// Doubles that reach every branch: zeros, subnormals, infinities, NaN, exact halves of the last decimal (some
// round down to even, some up), integers past 2^53 and near 2^63, values just below a carry into the next
// digit, and random ones spread over the exponents from 2^-80 to 2^70 (both signs).
std::vector<double> hard_doubles(uint64_t seed) {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.05,
                                0.15,
                                0.25,
                                0.125,
                                0.375,
                                0.0625,
                                0.03125,
                                2.5,
                                -3.25,
                                0.0005,
                                0.0015,
                                0.9995,
                                9.95,
                                99999999999.95,
                                999999999.9995,
                                123456789.05,
                                1e10 + 0.05,
                                1e11,
                                1e12,
                                284695178173.4,
                                9007199254740992.0,     // 2^53
                                9007199254740993.0,     // rounds to 2^53
                                4503599627370495.5,     // 2^52 - 0.5, a tie at every count of decimals
                                9223372036854774784.0,  // the last double below 2^63
                                9223372036854775808.0,  // 2^63
                                1e19,
                                1e300,
                                1e-9,
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 100000; ++i) {
    const int exponent = static_cast<int>(rng() % 151) - 80;
    const double value = std::ldexp(1.0 + std::ldexp(static_cast<double>(rng() >> 11), -53), exponent);
    values.push_back(rng() % 4 == 0 ? -value : value);
    values.push_back(static_cast<double>(rng() % 100000000) / 20.0);         // a tie at .x5 every other one
    values.push_back(static_cast<double>(rng() % 10000000000) / 2000.0);     // ties at .xxx5
    values.push_back(static_cast<double>(rng() % 10000000000000) / 1000.0);  // ns as the exports divide them
    values.push_back(std::ldexp(static_cast<double>(rng() % 1000001), -static_cast<int>(rng() % 24)));
    values.push_back(std::nextafter(std::round(value * 1000.0) / 1000.0, 0.0));  // just below a carry
  }
  return values;
}

template <int Decimals>
void expect_as_fmt(uint64_t seed) {
  char out[400];
  for (double value : hard_doubles(seed))
    ASSERT_EQ(std::string(out, write_fixed<Decimals>(out, value)), fmt::format("{:.{}f}", value, Decimals))
        << fmt::format("{:a} with {} decimals", value, Decimals);
}

TEST(Decimals, TenthsAreWrittenAsFmtWritesThem) {
  expect_as_fmt<1>(7);
}
TEST(Decimals, HundredthsAreWrittenAsFmtWritesThem) {
  expect_as_fmt<2>(8);
}
TEST(Decimals, ThousandthsAreWrittenAsFmtWritesThem) {
  expect_as_fmt<3>(9);
}
TEST(Decimals, MillionthsAreWrittenAsFmtWritesThem) {
  expect_as_fmt<6>(10);
}

// The exact halves go to the even last digit, as fmt rounds them: a test of the test's reference too.
TEST(Decimals, ExactHalvesRoundToEven) {
  char out[400];
  EXPECT_EQ(std::string(out, write_tenths(out, 0.25)), "0.2");
  EXPECT_EQ(std::string(out, write_tenths(out, 0.75)), "0.8");
  EXPECT_EQ(std::string(out, write_fixed<2>(out, 0.125)), "0.12");
  EXPECT_EQ(std::string(out, write_fixed<2>(out, 0.375)), "0.38");
  EXPECT_EQ(std::string(out, write_tenths(out, 284695178173.25)), "284695178173.2");
  EXPECT_EQ(std::string(out, write_tenths(out, -2.25)), "-2.2");
}

}  // namespace
}  // namespace ett::host
