// decimals.h: a number with a fixed count of decimals, as fmt's "{:.Nf}" writes it, and a number rounded to
// four decimals as nlohmann-json writes it, for tables and exports of millions of rows.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/decimal_digits.h"

namespace ett::host {

// The room write_fixed needs for any double (DBL_MAX has 309 digits before the point).
constexpr size_t kFixedRoom = 400;

// Writes `value` as "{:.<Decimals>f}" would at `out` (kFixedRoom characters of room, scratch included:
// kDigitsSpill) and returns the end.
// A finite, normal double below 2^63 is mantissa * 2^-shift exactly, so value * 10^Decimals is the 128-bit
// product mantissa * 10^Decimals shifted right by `shift`: its integer part and the bits shifted out round
// it exactly (an exact half to even, as fmt does). Zero, subnormals, infinities, NaN and bigger values go to
// fmt.
template <int Decimals>
char* write_fixed(char* out, double value) {
  static_assert(Decimals >= 1 && Decimals <= 6);
  constexpr uint64_t kScale = [] {
    uint64_t scale = 1;
    for (int i = 0; i < Decimals; ++i) scale *= 10;
    return scale;
  }();
  const auto bits = std::bit_cast<uint64_t>(value);
  const int biased_exponent = static_cast<int>(bits >> 52) & 0x7FF;
  // value = mantissa * 2^(biased_exponent - 1075) for a normal double; shift is minus that power.
  const int shift = 1075 - biased_exponent;
  if (biased_exponent == 0 || shift < -10 || shift > 127)
    return fmt::format_to(out, "{:.{}f}", value, Decimals);
  using u128 = unsigned __int128;
  const uint64_t mantissa = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  uint64_t whole = 0, fraction = 0;
  if (shift <= 0) {
    whole = mantissa << -shift;  // an integer below 2^63
  } else if constexpr (kScale < 1024) {
    // The product is below 2^63: 64-bit arithmetic. Past a shift of 63 it is below half a unit.
    const uint64_t product = mantissa * kScale;
    uint64_t units = 0;
    if (shift < 64) {
      units = product >> shift;
      const uint64_t rest = product - (units << shift);
      const uint64_t half = uint64_t{1} << (shift - 1);
      if (rest > half || (rest == half && (units & 1) != 0)) ++units;
    }
    if (bits >> 63) *out++ = '-';
    if (units < kScale) {
      *out++ = '0';
      *out++ = '.';
      return write_digits<Decimals>(out, static_cast<uint32_t>(units));
    }
    // The digits of units, the last Decimals of them moved one place on for the point: one number written,
    // where the whole part and the decimals were two.
    char* const end = write_decimal(out, units);
    char decimals[Decimals];
    std::memcpy(decimals, end - Decimals, Decimals);
    end[-Decimals] = '.';
    std::memcpy(end - Decimals + 1, decimals, Decimals);
    return end + 1;
  } else {
    const u128 product = static_cast<u128>(mantissa) * kScale;  // below 2^73
    u128 units = product >> shift;
    const u128 rest = product - (units << shift);
    const u128 half = u128{1} << (shift - 1);
    if (rest > half || (rest == half && (units & 1) != 0)) ++units;
    if (units >> 64 == 0) {  // most values: a 64-bit division, not a call to the 128-bit one
      whole = static_cast<uint64_t>(units) / kScale;
      fraction = static_cast<uint64_t>(units) % kScale;
    } else {
      whole = static_cast<uint64_t>(units / kScale);
      fraction = static_cast<uint64_t>(units % kScale);
    }
  }
  if (bits >> 63) *out++ = '-';
  out = write_decimal(out, whole);
  *out++ = '.';
  return write_digits<Decimals>(out, static_cast<uint32_t>(fraction));
}

inline char* write_tenths(char* out, double value) {
  return write_fixed<1>(out, value);
}

// Writes what nlohmann-json writes for `rounded`, the double nearest to units / 10^4 (`units` a whole number,
// as std::round(value * 10^4) gives it), from `units` instead of by nlohmann's grisu2, where the two are
// provably the same text, and returns the end (at most 24 characters, and kDigitsSpill bytes of scratch after
// them); returns nullptr where they may not be (the caller then asks nlohmann).
//
// Why they are the same: grisu2 writes the digits of the coarsest power of ten that has a multiple inside
// [M-, M+], the rounding interval of `rounded` (half an ulp either side; a quarter below a power of two,
// whose lower neighbour is half as far) narrowed by grisu2's own arithmetic, by less than 2^-58 of the value,
// which is under 1/32 ulp. Below 2^38 an ulp is at most 2^-15, less than 10^-4, so the interval holds at most
// one multiple of 10^-4, and the multiples of every coarser power of ten are among them: when units / 10^4 is
// inside the narrowed interval, it is the number grisu2 writes. It is when it lies less than 15/32 ulp from
// `rounded` (7/32 below a power of two), a test on integers: |units * 2^shift - mantissa * 10^4| against
// 10^4 ulps. nlohmann writes such a number without an exponent (it has at most 12 digits before the point,
// nlohmann's limit is 15), its shortest digits after the point, and ".0" after a whole number.
inline char* write_json_tenthousandths(char* out, double units, double rounded) {
  const double magnitude = std::fabs(rounded);
  if (!(magnitude >= 1e-4 && magnitude < 0x1p38)) return nullptr;  // also NaN
  if ((units < 0) != (rounded < 0)) return nullptr;
  const double whole_units = std::fabs(units);
  if (!(whole_units < 0x1p52)) return nullptr;
  const auto units_abs = static_cast<uint64_t>(whole_units);
  if (static_cast<double>(units_abs) != whole_units) return nullptr;  // not a whole number
  const auto bits = std::bit_cast<uint64_t>(magnitude);
  constexpr uint64_t kFractionMask = (uint64_t{1} << 52) - 1;
  const uint64_t mantissa = (bits & kFractionMask) | (uint64_t{1} << 52);
  const int shift = 1075 - static_cast<int>(bits >> 52);  // 15..66: magnitude = mantissa * 2^-shift
  // units / 10^4 - magnitude in ulps (2^-shift) is gap / 10^4; both terms below 2^119.
  using i128 = __int128;
  const i128 gap = (static_cast<i128>(units_abs) << shift) - static_cast<i128>(mantissa) * 10000;
  const bool below = gap < 0;
  const i128 distance = below ? -gap : gap;
  const bool power_of_two = (bits & kFractionMask) == 0;
  if (32 * distance >= (below && power_of_two ? 7 : 15) * i128{10000}) return nullptr;
  if (rounded < 0) *out++ = '-';
  out = write_decimal(out, units_abs / 10000);
  *out++ = '.';
  uint64_t fraction = units_abs % 10000;
  if (fraction == 0) {
    *out++ = '0';
    return out;
  }
  char digits[4];
  for (int i = 3; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  size_t length = 4;
  while (digits[length - 1] == '0') --length;
  std::memcpy(out, digits, length);
  return out + length;
}

}  // namespace ett::host
