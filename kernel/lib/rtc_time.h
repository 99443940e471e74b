// rtc_time.h: turns raw CMOS real-time-clock registers (BCD or binary, 12- or 24-hour) into Unix time.
#pragma once

#include <stdint.h>

namespace ett::lib {

// Register values exactly as read from the RTC.
struct RtcRegisters {
  uint8_t second;
  uint8_t minute;
  uint8_t hour;  // bit 7 = PM in 12-hour mode
  uint8_t day;
  uint8_t month;
  uint8_t year;  // two digits; the kernel assumes 2000-2099 (no reliable century register without ACPI)
  uint8_t status_b;

  bool operator==(const RtcRegisters&) const = default;
};

enum RtcStatusB : uint8_t {
  kRtc24Hour = 1u << 1,
  kRtcBinary = 1u << 2,  // clear: BCD
};

// Days from 1970-01-01 to the given proleptic Gregorian date.
constexpr int64_t days_from_civil(int64_t year, unsigned month, unsigned day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<int64_t>(day_of_era) - 719468;
}

// Seconds since 1970 (the RTC is taken as UTC), or 0 when a field is out of range or not valid BCD.
uint64_t rtc_to_unix(const RtcRegisters& registers);

}  // namespace ett::lib
