// decimals.h: a number with a fixed count of decimals, as fmt's "{:.Nf}" writes it, for tables and exports of
// millions of rows.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace ett::host {

// Writes `value` as "{:.<Decimals>f}" would at `out` (room for any double: 400 chars) and returns the end.
// The common case (0 <= value * 10^Decimals < 1e12, not near a tie) takes an integer of units of the last
// decimal: value * 10^Decimals is then within 1.2e-4 of the exact product, and rounding it gives the same
// last digit unless its fraction is within 1e-3 of .5, where the general formatter decides instead.
template <int Decimals>
char* write_fixed(char* out, double value) {
  static_assert(Decimals >= 1 && Decimals <= 6);
  constexpr uint64_t kScale = [] {
    uint64_t scale = 1;
    for (int i = 0; i < Decimals; ++i) scale *= 10;
    return scale;
  }();
  const double scaled = value * static_cast<double>(kScale);
  if (!std::signbit(value) && scaled < 1e12) {
    const double whole = std::floor(scaled);
    const double fraction = scaled - whole;
    if (std::fabs(fraction - 0.5) > 1e-3) {
      const uint64_t units = static_cast<uint64_t>(whole) + (fraction > 0.5 ? 1 : 0);
      out = fmt::format_to(out, FMT_COMPILE("{}"), units / kScale);
      *out++ = '.';
      uint64_t rest = units % kScale;
      for (int i = Decimals - 1; i >= 0; --i) {
        out[i] = static_cast<char>('0' + rest % 10);
        rest /= 10;
      }
      return out + Decimals;
    }
  }
  return fmt::format_to(out, "{:.{}f}", value, Decimals);
}

inline char* write_tenths(char* out, double value) {
  return write_fixed<1>(out, value);
}

}  // namespace ett::host
