// decimals_test.cpp: write_fixed writes what fmt's "{:.Nf}" writes, for doubles of every kind and magnitude;
// write_json_tenthousandths writes what nlohmann-json writes, or leaves the number to it.
#include "common/decimals.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
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

// nlohmann-json's text for a double, as a document of it dumps it.
std::string nlohmann_text(double value) {
  return nlohmann::json(value).dump();
}

// How far units / 10^4 lies from `rounded`, in 1/1000 ulp of `rounded` (the samples near the function's limit
// of 15/32 ulp are picked with it).
int64_t distance_milli_ulps(double units, double rounded) {
  const double magnitude = std::fabs(rounded);
  int exponent = 0;
  (void)std::frexp(magnitude, &exponent);
  const double ulp = std::ldexp(1.0, exponent - 53);
  const long double gap = std::fabs(static_cast<long double>(std::fabs(units)) / 10000.0L - magnitude);
  return static_cast<int64_t>(gap / ulp * 1000.0L);
}

// The text written, where there is one, is nlohmann's for the same double; and it is written for nearly every
// number in range (the point of it), not left to nlohmann.
TEST(Decimals, TenThousandthsAreWrittenAsNlohmannWritesThem) {
  std::mt19937_64 rng(11);
  char out[64];
  size_t written = 0, in_range = 0, near_limit = 0;
  // `nearest`: rounded is the double nearest to units / 10^4, as a division gives it.
  auto check = [&](double units, double rounded, bool nearest = true) {
    char* end = write_json_tenthousandths(out, units, rounded);
    const double magnitude = std::fabs(rounded);
    const bool range = magnitude >= 1e-4 && magnitude < 0x1p38 && units == std::round(units);
    in_range += range && nearest;
    if (end == nullptr) return;
    ++written;
    EXPECT_TRUE(range) << fmt::format("{:a} from {} units", rounded, units);
    ASSERT_EQ(std::string(out, end), nlohmann_text(rounded))
        << fmt::format("{:a} from {} units", rounded, units);
  };
  for (int i = 0; i < 2000000; ++i) {
    // Whole numbers of units spread over 10^0..10^15.6 (so values 10^-4..2^38 and a little past), both signs.
    const double scale = std::pow(10.0, std::ldexp(static_cast<double>(rng() >> 11), -53) * 15.6);
    double units = std::floor(scale * (1.0 + std::ldexp(static_cast<double>(rng() >> 11), -53)));
    if (rng() % 4 == 0) units = -units;
    const double rounded = units / 10000.0;
    check(units, rounded);
    near_limit += std::abs(distance_milli_ulps(units, rounded) - 468) < 30;
    // A double one or two ulps off: units / 10^4 is then half an ulp away or more, and the text is
    // nlohmann's.
    check(units, std::nextafter(rounded, rng() % 2 ? 1e300 : -1e300), false);
    // The time of an event in ns, as the analyses compute it, rounded as jnum rounds it.
    const double ns = static_cast<double>(rng() % 300000000000000) * (1e9 / 2.1e9 + 1e-7 * (rng() % 100));
    const double ns_units = std::round(ns * 10000.0);
    check(ns_units, ns_units / 10000.0);
  }
  // Just below a power of two, and on it (its lower neighbour is half as far).
  for (int power = -13; power < 38; ++power)
    for (int k = -3; k <= 3; ++k) {
      const double units = std::round(std::ldexp(10000.0, power)) + k;
      check(units, units / 10000.0);
    }
  EXPECT_GT(written, in_range * 9 / 10) << written << " of " << in_range;
  EXPECT_GT(near_limit, 1000u);  // the limit was reached from both sides
}

TEST(Decimals, TenThousandthsOfTheFormsNlohmannWrites) {
  char out[64];
  auto text = [&](double units) {
    char* end = write_json_tenthousandths(out, units, units / 10000.0);
    return end ? std::string(out, end) : std::string("(nlohmann)");
  };
  EXPECT_EQ(text(12000000), "1200.0");
  EXPECT_EQ(text(12345678), "1234.5678");
  EXPECT_EQ(text(-12345000), "-1234.5");
  EXPECT_EQ(text(15), "0.0015");
  EXPECT_EQ(text(12), "(nlohmann)");  // 0.0012 is 0.4848 ulp from its double: past the limit
  EXPECT_EQ(text(1), "0.0001");
  EXPECT_EQ(text(1424195955343894), "142419595534.3894");
  EXPECT_EQ(text(0), "(nlohmann)");
  EXPECT_EQ(text(std::ldexp(1.0, 52)), "(nlohmann)");               // 2^52 units: past 2^38
  EXPECT_EQ(write_json_tenthousandths(out, 15, -0.0015), nullptr);  // signs that disagree
}

}  // namespace
}  // namespace ett::host
