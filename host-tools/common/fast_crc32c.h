// fast_crc32c.h: CRC-32C for the host, the same function as ett/crc32c.h but with SSE4.2 when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ett::host {

// Same contract as ett::crc32c_update: continue `crc` (0 to start) over `size` bytes.
uint32_t fast_crc32c_update(uint32_t crc, const void* data, size_t size);
inline uint32_t fast_crc32c(const void* data, size_t size) {
  return fast_crc32c_update(0, data, size);
}

// CRC of a structure of `size` bytes whose 4-byte crc field at `crc_offset` counts as zero.
uint32_t crc32c_with_zero_field(const void* data, size_t size, size_t crc_offset);

}  // namespace ett::host
