// decimal_digits.h: unsigned integers written in decimal eight digits at a time, the digits computed side by
// side in one 64-bit register, for exports of millions of rows (a number is most of a row's work).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ett::host {

static_assert(std::endian::native == std::endian::little, "the digits are stored first digit first");

// write_decimal may write up to this many bytes past the end it returns (scratch, for the next field to
// overwrite); from `at` it writes at most 20 bytes.
constexpr size_t kDigitsSpill = 7;

namespace digits_detail {

constexpr uint64_t kAsciiZeros = 0x3030303030303030;

// The eight decimal digits of n < 10^8 (leading zeros included) as byte values 0..9, the first digit in the
// lowest byte. n splits into two halves of four digits (32-bit lanes), each half into two pairs (16-bit
// lanes), each pair into two digits (bytes); a lane's quotient by 100 is (x * 10486) >> 20 for x < 10^4 and
// by 10 is (x * 103) >> 10 for x < 100, and no lane's product reaches the next lane.
inline uint64_t eight_digits(uint32_t n) {
  const uint64_t halves = (n / 10000) | (uint64_t{n % 10000} << 32);
  const uint64_t hundreds = ((halves * 10486) >> 20) & 0x0000007F0000007F;
  const uint64_t pairs = hundreds | ((halves - hundreds * 100) << 16);
  const uint64_t tens = ((pairs * 103) >> 10) & 0x000F000F000F000F;
  return tens | ((pairs - tens * 10) << 8);
}

// n < 10^8 without leading zeros ("0" for 0).
inline char* write_short(char* at, uint32_t n) {
  const uint64_t digits = eight_digits(n);
  // Leading zero digits are zero bytes at the low end; bit 56 keeps the last digit when n is 0.
  const int zeros = std::countr_zero(digits | (uint64_t{1} << 56)) / 8;
  const uint64_t text = (digits | kAsciiZeros) >> (8 * zeros);
  std::memcpy(at, &text, 8);
  return at + 8 - zeros;
}

inline char* write_eight(char* at, uint32_t n) {
  const uint64_t text = eight_digits(n) | kAsciiZeros;
  std::memcpy(at, &text, 8);
  return at + 8;
}

// Each byte value's digits, first digit first, then the digit count in the fourth byte.
constexpr auto kByteDigits = [] {
  struct Table {
    char text[256][4];
  } table{};
  for (int n = 0; n < 256; ++n) {
    char* at = table.text[n];
    int count = 0;
    if (n >= 100) at[count++] = static_cast<char>('0' + n / 100);
    if (n >= 10) at[count++] = static_cast<char>('0' + n / 10 % 10);
    at[count++] = static_cast<char>('0' + n % 10);
    at[3] = static_cast<char>(count);
  }
  return table;
}();

}  // namespace digits_detail

// Writes a byte value (a probe, a code, lines) in decimal: one copy from a table, where the eight-digit path
// of write_decimal computes digits a byte value never has. Writes 4 bytes from `at`, the last as scratch.
inline char* write_byte_decimal(char* at, uint8_t n) {
  const char* text = digits_detail::kByteDigits.text[n];
  std::memcpy(at, text, 4);
  return at + text[3];
}

// Writes `n` in decimal at `at` (no leading zeros) and returns the end: what std::to_chars writes.
inline char* write_decimal(char* at, uint64_t n) {
  constexpr uint64_t k8 = 100'000'000;
  if (n < k8) return digits_detail::write_short(at, static_cast<uint32_t>(n));
  if (n < k8 * k8) {
    at = digits_detail::write_short(at, static_cast<uint32_t>(n / k8));
    return digits_detail::write_eight(at, static_cast<uint32_t>(n % k8));
  }
  at = digits_detail::write_short(at, static_cast<uint32_t>(n / (k8 * k8)));  // at most 1844
  const uint64_t rest = n % (k8 * k8);
  at = digits_detail::write_eight(at, static_cast<uint32_t>(rest / k8));
  return digits_detail::write_eight(at, static_cast<uint32_t>(rest % k8));
}

// Writes the last `Count` digits of `n` < 10^Count, leading zeros included (the decimals of a fixed-point
// number), and returns the end.
template <int Count>
char* write_digits(char* at, uint32_t n) {
  static_assert(Count >= 1 && Count <= 8);
  const uint64_t text = (digits_detail::eight_digits(n) | digits_detail::kAsciiZeros) >> (8 * (8 - Count));
  std::memcpy(at, &text, 8);
  return at + Count;
}

}  // namespace ett::host
