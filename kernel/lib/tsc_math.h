// tsc_math.h: conversions between TSC ticks and wall time that cannot overflow for realistic rates.
#pragma once

#include <stdint.h>

namespace ett::lib {

// TSC ticks in `ms` milliseconds at `tsc_hz`; exact for any ms < 2^32 and tsc_hz < 2^44.
constexpr uint64_t ticks_for_ms(uint64_t ms, uint64_t tsc_hz) {
  return ms * (tsc_hz / 1000) + ms * (tsc_hz % 1000) / 1000;
}

// Microseconds in `ticks` TSC ticks (rounded down); tsc_hz must be non-zero.
constexpr uint64_t us_for_ticks(uint64_t ticks, uint64_t tsc_hz) {
  return ticks / tsc_hz * 1'000'000 + ticks % tsc_hz * 1'000'000 / tsc_hz;
}

}  // namespace ett::lib
