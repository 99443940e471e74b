// decimals.h: a number with a fixed count of decimals, as fmt's "{:.Nf}" writes it, for tables and exports of
// millions of rows.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <bit>
#include <cstddef>
#include <cstdint>

namespace ett::host {

// The room write_fixed needs for any double (DBL_MAX has 309 digits before the point).
constexpr size_t kFixedRoom = 400;

// Writes `value` as "{:.<Decimals>f}" would at `out` (kFixedRoom characters of room) and returns the end.
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
  out = fmt::format_to(out, FMT_COMPILE("{}"), whole);
  *out++ = '.';
  for (int i = Decimals - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  return out + Decimals;
}

inline char* write_tenths(char* out, double value) {
  return write_fixed<1>(out, value);
}

}  // namespace ett::host
