// rtc_time_test.cpp: decoding CMOS RTC registers into Unix time (kernel/lib/rtc_time).
#include "lib/rtc_time.h"

#include <gtest/gtest.h>

namespace ett::lib {
namespace {

constexpr uint8_t kBcd24 = kRtc24Hour;
constexpr uint8_t kBinary24 = kRtc24Hour | kRtcBinary;
constexpr uint8_t kBcd12 = 0;

TEST(KernelRtcTime, DaysFromCivil) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
}

TEST(KernelRtcTime, Bcd24Hour) {
  // 2024-03-15 12:34:56 as QEMU's RTC shows it by default.
  EXPECT_EQ(rtc_to_unix({0x56, 0x34, 0x12, 0x15, 0x03, 0x24, kBcd24}), 1710506096u);
}

TEST(KernelRtcTime, Binary24Hour) {
  EXPECT_EQ(rtc_to_unix({56, 34, 12, 15, 3, 24, kBinary24}), 1710506096u);
}

TEST(KernelRtcTime, TwelveHourClock) {
  EXPECT_EQ(rtc_to_unix({0x56, 0x34, 0x80 | 0x12, 0x15, 0x03, 0x24, kBcd12}), 1710506096u);  // 12 PM = noon
  EXPECT_EQ(rtc_to_unix({0x00, 0x05, 0x12, 0x15, 0x03, 0x24, kBcd12}), 1710461100u);         // 12 AM = 00:05
  EXPECT_EQ(rtc_to_unix({0x00, 0x05, 0x80 | 0x01, 0x15, 0x03, 0x24, kBcd12}), 1710461100u + 13 * 3600);
  EXPECT_EQ(rtc_to_unix({0x00, 0x00, 0x00, 0x15, 0x03, 0x24, kBcd12}), 0u);  // hour 0 does not exist
}

TEST(KernelRtcTime, CenturyEdges) {
  EXPECT_EQ(rtc_to_unix({0x00, 0x00, 0x00, 0x29, 0x02, 0x00, kBcd24}), 951782400u);   // 2000-02-29
  EXPECT_EQ(rtc_to_unix({0x59, 0x59, 0x23, 0x31, 0x12, 0x99, kBcd24}), 4102444799u);  // 2099-12-31
}

TEST(KernelRtcTime, InvalidFieldsGiveZero) {
  EXPECT_EQ(rtc_to_unix({0x5A, 0x34, 0x12, 0x15, 0x03, 0x24, kBcd24}), 0u);  // not BCD
  EXPECT_EQ(rtc_to_unix({0x60, 0x34, 0x12, 0x15, 0x03, 0x24, kBcd24}), 0u);  // second 60
  EXPECT_EQ(rtc_to_unix({0x00, 0x34, 0x24, 0x15, 0x03, 0x24, kBcd24}), 0u);  // hour 24
  EXPECT_EQ(rtc_to_unix({0x00, 0x34, 0x12, 0x00, 0x03, 0x24, kBcd24}), 0u);  // day 0
  EXPECT_EQ(rtc_to_unix({0x00, 0x34, 0x12, 0x30, 0x02, 0x24, kBcd24}), 0u);  // Feb 30
  EXPECT_EQ(rtc_to_unix({0x00, 0x34, 0x12, 0x29, 0x02, 0x23, kBcd24}), 0u);  // 2023 is not a leap year
  EXPECT_EQ(rtc_to_unix({0x00, 0x34, 0x12, 0x15, 0x13, 0x24, kBcd24}), 0u);  // month 13
  EXPECT_EQ(rtc_to_unix({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), 0u);    // floating bus
  EXPECT_EQ(rtc_to_unix({0, 0, 0, 0, 0, 0, kBinary24}), 0u);
}

}  // namespace
}  // namespace ett::lib
