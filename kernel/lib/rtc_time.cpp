// rtc_time.cpp: RTC register decoding (BCD, 12-hour clock) and the range checks that reject garbage.
#include "lib/rtc_time.h"

namespace ett::lib {

namespace {

constexpr int kInvalid = -1;

int decode(uint8_t value, bool binary) {
  if (binary) return value;
  if ((value & 0x0F) > 9 || (value >> 4) > 9) return kInvalid;
  return (value >> 4) * 10 + (value & 0x0F);
}

int days_in_month(int year, int month) {
  constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

uint64_t rtc_to_unix(const RtcRegisters& r) {
  const bool binary = r.status_b & kRtcBinary;
  const int second = decode(r.second, binary);
  const int minute = decode(r.minute, binary);
  int hour = decode(static_cast<uint8_t>(r.hour & 0x7F), binary);
  const int day = decode(r.day, binary);
  const int month = decode(r.month, binary);
  const int year = decode(r.year, binary);
  if (second == kInvalid || minute == kInvalid || hour == kInvalid || day == kInvalid || month == kInvalid ||
      year == kInvalid)
    return 0;
  if (!(r.status_b & kRtc24Hour)) {
    if (hour < 1 || hour > 12) return 0;
    hour = (hour % 12) + ((r.hour & 0x80) ? 12 : 0);
  }
  const int full_year = 2000 + year;
  if (second > 59 || minute > 59 || hour > 23 || year > 99 || month < 1 || month > 12 || day < 1 ||
      day > days_in_month(full_year, month))
    return 0;
  const int64_t days = days_from_civil(full_year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return static_cast<uint64_t>(days * 86400 + hour * 3600 + minute * 60 + second);
}

}  // namespace ett::lib
