// serial_framing.h: the ETTX line of dump=serial, written by the kernel and read back by `ett ls/extract`.
//
// Every 64 bytes of a trace-disk sector go out as one text line:
//
//   ETTX <lba, hex> <byte offset in the sector, hex> <128 hex digits> <crc32c, 8 hex digits>
//   ETTX 8 40 4554545345535331... 5d1c0a3e
//
// The CRC32C is over the line's text from "ETTX" to the space before it. Freestanding: no library calls, so
// the kernel and the host build the same code.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/crc32c.h"
#include "ett/trace_format.h"

namespace ett::serial {

inline constexpr char kLinePrefix[] = "ETTX ";
inline constexpr size_t kLinePrefixLength = sizeof(kLinePrefix) - 1;
inline constexpr uint32_t kBytesPerLine = 64;
// Prefix, 16 + 1 digits of LBA and space, 3 + 1 of offset and space, the data, space, CRC, newline.
inline constexpr size_t kMaxLineLength = kLinePrefixLength + 17 + 4 + 2 * kBytesPerLine + 1 + 8 + 1;

namespace detail {
inline constexpr char kHexDigits[] = "0123456789abcdef";

inline size_t put_hex(char* out, uint64_t value, unsigned min_digits) {
  char digits[16];
  unsigned count = 0;
  do {
    digits[count++] = kHexDigits[value & 0xF];
    value >>= 4;
  } while (value != 0 && count < 16);
  while (count < min_digits) digits[count++] = '0';
  for (unsigned i = 0; i < count; ++i) out[i] = digits[count - 1 - i];
  return count;
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Parses [begin, end) as lowercase hex of 1 to 16 digits.
inline bool parse_hex(const char* begin, const char* end, uint64_t& out) {
  if (begin >= end || end - begin > 16) return false;
  uint64_t value = 0;
  for (const char* p = begin; p < end; ++p) {
    const int digit = hex_value(*p);
    if (digit < 0) return false;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  out = value;
  return true;
}
}  // namespace detail

// Writes the line for `bytes` (kBytesPerLine of them) at `lba`/`offset` into `out` (kMaxLineLength), newline
// included; returns its length.
inline size_t encode_line(char* out, uint64_t lba, uint32_t offset, const uint8_t* bytes) {
  size_t length = 0;
  for (size_t i = 0; i < kLinePrefixLength; ++i) out[length++] = kLinePrefix[i];
  length += detail::put_hex(out + length, lba, 1);
  out[length++] = ' ';
  length += detail::put_hex(out + length, offset, 1);
  out[length++] = ' ';
  for (uint32_t i = 0; i < kBytesPerLine; ++i) {
    out[length++] = detail::kHexDigits[bytes[i] >> 4];
    out[length++] = detail::kHexDigits[bytes[i] & 0xF];
  }
  const uint32_t crc = crc32c(out, length);
  out[length++] = ' ';
  length += detail::put_hex(out + length, crc, 8);
  out[length++] = '\n';
  return length;
}

struct Line {
  uint64_t lba = 0;
  uint32_t offset = 0;
  uint8_t data[kBytesPerLine] = {};
};

// Parses one line without its newline (trailing '\r' or spaces already removed). False for anything that is
// not a whole, checked ETTX line with an offset inside a sector.
inline bool decode_line(const char* text, size_t length, Line& out) {
  if (length < kLinePrefixLength) return false;
  for (size_t i = 0; i < kLinePrefixLength; ++i)
    if (text[i] != kLinePrefix[i]) return false;
  const char* end = text + length;
  if (length < 9 || end[-9] != ' ') return false;
  uint64_t crc = 0;
  if (!detail::parse_hex(end - 8, end, crc)) return false;
  const char* body_end = end - 9;
  if (crc32c(text, static_cast<size_t>(body_end - text)) != crc) return false;
  const char* p = text + kLinePrefixLength;
  const char* space = p;
  while (space < body_end && *space != ' ') ++space;
  uint64_t lba = 0, offset = 0;
  if (space == body_end || !detail::parse_hex(p, space, lba)) return false;
  p = space + 1;
  space = p;
  while (space < body_end && *space != ' ') ++space;
  if (space == body_end || !detail::parse_hex(p, space, offset)) return false;
  p = space + 1;
  if (body_end - p != 2 * kBytesPerLine || offset % kBytesPerLine != 0 || offset >= format::kSectorSize)
    return false;
  for (uint32_t i = 0; i < kBytesPerLine; ++i) {
    const int high = detail::hex_value(p[2 * i]), low = detail::hex_value(p[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out.data[i] = static_cast<uint8_t>(high << 4 | low);
  }
  out.lba = lba;
  out.offset = static_cast<uint32_t>(offset);
  return true;
}

}  // namespace ett::serial
