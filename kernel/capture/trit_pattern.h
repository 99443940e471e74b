// trit_pattern.h: mask/match patterns over the eight lines, written as trits from D7 to D0 ("1X0XXXXX").
//
// The Sun Fire instrumentation's notation: '1' = the line must be high, '0' = must be low, 'X' = don't care.
// trigger= uses all three; filter= uses '1' (recorded) and 'X' (ignored).
#pragma once

#include <stdint.h>

namespace ett::capture {

struct TritPattern {
  uint8_t mask = 0;   // lines that take part
  uint8_t match = 0;  // their required values (a subset of mask)

  constexpr bool matches(uint8_t lines) const { return (lines & mask) == match; }
};

enum class TritError : uint8_t { None, Length, Character };

// Parses exactly eight trits, D7 first. `allow_zero` is false for filter= ('0' has no meaning there).
constexpr TritError parse_trits(const char* text, uint32_t length, bool allow_zero, TritPattern& out) {
  if (length != 8) return TritError::Length;
  TritPattern pattern;
  for (uint32_t i = 0; i < 8; ++i) {
    const uint8_t bit = static_cast<uint8_t>(0x80u >> i);
    switch (text[i]) {
      case '1':
        pattern.mask |= bit;
        pattern.match |= bit;
        break;
      case '0':
        if (!allow_zero) return TritError::Character;
        pattern.mask |= bit;
        break;
      case 'X':
      case 'x':
        break;
      default:
        return TritError::Character;
    }
  }
  out = pattern;
  return TritError::None;
}

static_assert([] {
  TritPattern p;
  return parse_trits("1X0XXXXX", 8, true, p) == TritError::None && p.mask == 0xA0 && p.match == 0x80;
}());

}  // namespace ett::capture
