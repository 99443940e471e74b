// tenths.h: a number with one decimal, as fmt's "{:.1f}" writes it, for tables of millions of rows.
#pragma once

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace ett::host {

// Writes `value` as "{:.1f}" would at `out` (room for any double: 400 chars) and returns the end. The common
// case (0 <= value < 1e11, not near a tie) takes an integer of tenths: value * 10 is then within 1e-4 of the
// exact product, and rounding it gives the same tenth unless its fraction is near .5, where the general
// formatter decides instead.
inline char* write_tenths(char* out, double value) {
  if (!std::signbit(value) && value < 1e11) {
    const double scaled = value * 10;
    const double whole = std::floor(scaled);
    const double fraction = scaled - whole;
    if (std::fabs(fraction - 0.5) > 1e-3) {
      const uint64_t tenths = static_cast<uint64_t>(whole) + (fraction > 0.5 ? 1 : 0);
      out = fmt::format_to(out, FMT_COMPILE("{}"), tenths / 10);
      *out++ = '.';
      *out++ = static_cast<char>('0' + tenths % 10);
      return out;
    }
  }
  return fmt::format_to(out, FMT_COMPILE("{:.1f}"), value);
}

}  // namespace ett::host
