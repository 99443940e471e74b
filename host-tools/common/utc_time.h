// utc_time.h: TSC stamps to UTC through a stored PPS mapping, and ISO-8601 UTC text with nanoseconds, fast
// enough for one per event of a 10 M-event export.
#pragma once

#include <cstdint>
#include <string>

namespace ett::host {

// A UTC instant: seconds since 1970 and nanoseconds (a double would keep only ~200 ns at today's dates).
struct UtcNs {
  int64_t second = 0;
  int64_t nanosecond = 0;  // 0 .. 999,999,999

  int64_t unix_ns() const { return second * 1'000'000'000 + nanosecond; }  // good until 2262
};

// UTC(tsc) = utc_second + (tsc - anchor_tsc) / tsc_hz: the mapping `ett analyze pps` fits and stores (table
// pps_mapping): pulse 0 at TSC anchor_tsc is UTC second utc_second, tsc_hz ticks a true second.
class TscUtcClock {
 public:
  TscUtcClock(double anchor_tsc, double tsc_hz, int64_t utc_second)
      : m_anchor_tsc(anchor_tsc), m_tsc_hz(tsc_hz), m_utc_second(utc_second) {}

  UtcNs at(uint64_t tsc) const { return after_anchor(static_cast<double>(tsc) - m_anchor_tsc); }
  // The instant `ticks` TSC ticks after the anchor pulse (fractional ticks kept).
  UtcNs after_anchor(double ticks) const;
  int64_t unix_ns(uint64_t tsc) const { return at(tsc).unix_ns(); }

 private:
  double m_anchor_tsc;
  double m_tsc_hz;
  int64_t m_utc_second;
};

// "2026-11-23T16:00:05.000000123Z": always 30 characters.
constexpr size_t kIsoUtcLength = 30;

// Writes instants as ISO-8601 UTC text; the calendar date and time of day are worked out once per second
// (consecutive events mostly share it).
class IsoUtcWriter {
 public:
  // Writes kIsoUtcLength characters at `out` and returns the end.
  char* write(const UtcNs& time, char* out);

 private:
  int64_t m_second = INT64_MIN;
  char m_prefix[20] = {};  // "2026-11-23T16:00:05."
};

std::string format_iso_utc(const UtcNs& time);

}  // namespace ett::host
