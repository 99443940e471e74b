// units_test.cpp: sizes (--size) and frequencies (--cpu-hz) from the command line.
#include "common/units.h"

#include <gtest/gtest.h>

namespace ett::host {
namespace {

TEST(Units, ByteSizes) {
  EXPECT_EQ(*parse_byte_size("37376"), 37376u);
  EXPECT_EQ(*parse_byte_size("512K"), 512u << 10);
  EXPECT_EQ(*parse_byte_size("64M"), 64u << 20);
  EXPECT_EQ(*parse_byte_size("64m"), 64u << 20);
  EXPECT_EQ(*parse_byte_size("2G"), 2ull << 30);
  EXPECT_EQ(*parse_byte_size("2GiB"), 2ull << 30);
  EXPECT_EQ(*parse_byte_size("1T"), 1ull << 40);
  EXPECT_EQ(*parse_byte_size("100B"), 100u);
  for (const char* bad : {"", "M", "-1", "1.5M", "12Q", "1MX", "99999999999999999999", "20000000T"}) {
    auto parsed = parse_byte_size(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("invalid size"), std::string::npos);
  }
}

TEST(Units, Frequencies) {
  EXPECT_EQ(*parse_hz("2400000000"), 2'400'000'000u);
  EXPECT_EQ(*parse_hz("2.4e9"), 2'400'000'000u);
  EXPECT_EQ(*parse_hz("2.4G"), 2'400'000'000u);
  EXPECT_EQ(*parse_hz("2.4GHz"), 2'400'000'000u);
  EXPECT_EQ(*parse_hz("3000M"), 3'000'000'000u);
  EXPECT_EQ(*parse_hz("100k"), 100'000u);
  for (const char* bad : {"", "0", "-5", "fast", "2.4X", "nan", "inf"}) {
    auto parsed = parse_hz(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().message.find("invalid frequency"), std::string::npos);
  }
}

}  // namespace
}  // namespace ett::host
