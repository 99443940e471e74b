// crc32c_slice8.h: CRC-32C eight bytes per step (slice-by-8), for the dump's chunks: the same values as
// ett/crc32c.h with about half the memory reads (build_chunk's checksum in the kernel's dump), which is what
// a chunk's CRC costs under QEMU's TCG and on an old CPU (the dump to AHCI or NVMe waits for the CPU, not for
// the disk).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/crc32c.h"

namespace ett::dump {

namespace detail {
struct Crc32cSlices {
  uint32_t table[8][256];
};

constexpr Crc32cSlices make_crc32c_slices() {
  Crc32cSlices slices{};
  for (uint32_t i = 0; i < 256; ++i) slices.table[0][i] = ett::detail::kCrc32cTable.entries[i];
  for (uint32_t i = 0; i < 256; ++i)
    for (uint32_t k = 1; k < 8; ++k)
      slices.table[k][i] = (slices.table[k - 1][i] >> 8) ^ slices.table[0][slices.table[k - 1][i] & 0xFF];
  return slices;
}

inline constexpr Crc32cSlices kCrc32cSlices = make_crc32c_slices();
}  // namespace detail

// crc32c(data, size) of ett/crc32c.h, for any size and alignment (little-endian).
inline uint32_t crc32c_slice8(const void* data, size_t size) {
  const auto& t = detail::kCrc32cSlices.table;
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint32_t crc = ~0u;
  for (; size > 0 && (reinterpret_cast<uintptr_t>(bytes) & 3) != 0; --size, ++bytes)
    crc = t[0][(crc ^ *bytes) & 0xFF] ^ (crc >> 8);
  for (; size >= 8; size -= 8, bytes += 8) {
    uint32_t low, high;
    __builtin_memcpy(&low, bytes, 4);
    __builtin_memcpy(&high, bytes + 4, 4);
    low ^= crc;
    crc = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^ t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^
          t[3][high & 0xFF] ^ t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^ t[0][high >> 24];
  }
  for (; size > 0; --size, ++bytes) crc = t[0][(crc ^ *bytes) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace ett::dump
