// utc_time.cpp: the PPS mapping applied to a TSC value, and the ISO-8601 text of a UTC instant.
#include "common/utc_time.h"

#include <cmath>
#include <cstring>

namespace ett::host {

namespace {

// The civil date of a day count since 1970-01-01 (proleptic Gregorian; the era arithmetic of Howard
// Hinnant's days_from_civil, inverted).
void civil_from_days(int64_t days, int64_t& year, unsigned& month, unsigned& day) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0);
}

void two_digits(char* out, unsigned value) {
  out[0] = static_cast<char>('0' + value / 10);
  out[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

UtcNs TscUtcClock::after_anchor(double ticks) const {
  if (m_tsc_hz <= 0) return {m_utc_second, 0};
  // Seconds since pulse 0: small enough for a double to keep far below a nanosecond.
  const double since = ticks / m_tsc_hz;
  const double whole = std::floor(since);
  UtcNs time{m_utc_second + static_cast<int64_t>(whole), std::llround((since - whole) * 1e9)};
  if (time.nanosecond >= 1'000'000'000) {
    time.second += 1;
    time.nanosecond -= 1'000'000'000;
  }
  return time;
}

char* IsoUtcWriter::write(const UtcNs& time, char* out) {
  if (time.second != m_second) {
    m_second = time.second;
    int64_t days = time.second / 86400, in_day = time.second % 86400;
    if (in_day < 0) {
      in_day += 86400;
      days -= 1;
    }
    int64_t year = 0;
    unsigned month = 0, day = 0;
    civil_from_days(days, year, month, day);
    const auto y = static_cast<unsigned>(year < 0 ? 0 : year > 9999 ? 9999 : year);
    two_digits(m_prefix, y / 100);
    two_digits(m_prefix + 2, y % 100);
    m_prefix[4] = '-';
    two_digits(m_prefix + 5, month);
    m_prefix[7] = '-';
    two_digits(m_prefix + 8, day);
    m_prefix[10] = 'T';
    two_digits(m_prefix + 11, static_cast<unsigned>(in_day / 3600));
    m_prefix[13] = ':';
    two_digits(m_prefix + 14, static_cast<unsigned>(in_day / 60 % 60));
    m_prefix[16] = ':';
    two_digits(m_prefix + 17, static_cast<unsigned>(in_day % 60));
    m_prefix[19] = '.';
  }
  std::memcpy(out, m_prefix, sizeof m_prefix);
  auto ns = static_cast<uint32_t>(time.nanosecond);
  for (int i = 28; i >= 20; --i) {
    out[i] = static_cast<char>('0' + ns % 10);
    ns /= 10;
  }
  out[29] = 'Z';
  return out + kIsoUtcLength;
}

std::string format_iso_utc(const UtcNs& time) {
  char text[kIsoUtcLength];
  IsoUtcWriter writer;
  writer.write(time, text);
  return std::string(text, kIsoUtcLength);
}

}  // namespace ett::host
