// crc32c.h: CRC-32C (Castagnoli), the checksum of trace-disk labels, session headers and chunks.
// Freestanding: the kernel and the host tools share this one implementation.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ett {

namespace detail {
struct Crc32cTable {
  uint32_t entries[256];
};

constexpr Crc32cTable make_crc32c_table() {
  Crc32cTable table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;  // reflected polynomial 0x1EDC6F41
    table.entries[i] = crc;
  }
  return table;
}

inline constexpr Crc32cTable kCrc32cTable = make_crc32c_table();
}  // namespace detail

// Continues a CRC over more bytes; start with crc = 0.
inline uint32_t crc32c_update(uint32_t crc, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = detail::kCrc32cTable.entries[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline uint32_t crc32c(const void* data, size_t size) {
  return crc32c_update(0, data, size);
}

}  // namespace ett
