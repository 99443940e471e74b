// fast_crc32c.cpp: hardware CRC-32C (SSE4.2 crc32 instruction) with the shared table version as fallback.
#include "common/fast_crc32c.h"

#include <cstring>

#include "ett/crc32c.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define ETT_HAVE_X86_CRC 1
#endif

namespace ett::host {

#ifdef ETT_HAVE_X86_CRC
namespace {

__attribute__((target("sse4.2"))) uint32_t hardware_update(uint32_t crc, const uint8_t* bytes, size_t size) {
  uint32_t state = ~crc;
#ifdef __x86_64__
  uint64_t state64 = state;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    state64 = _mm_crc32_u64(state64, word);
    bytes += 8;
    size -= 8;
  }
  state = static_cast<uint32_t>(state64);
#endif
  while (size > 0) {
    state = _mm_crc32_u8(state, *bytes);
    ++bytes;
    --size;
  }
  return ~state;
}

bool cpu_has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

}  // namespace
#endif

uint32_t fast_crc32c_update(uint32_t crc, const void* data, size_t size) {
#ifdef ETT_HAVE_X86_CRC
  if (cpu_has_sse42()) return hardware_update(crc, static_cast<const uint8_t*>(data), size);
#endif
  return ett::crc32c_update(crc, data, size);
}

uint32_t crc32c_with_zero_field(const void* data, size_t size, size_t crc_offset) {
  static constexpr uint8_t kZero[4] = {};
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint32_t crc = fast_crc32c_update(0, bytes, crc_offset);
  crc = fast_crc32c_update(crc, kZero, sizeof(kZero));
  return fast_crc32c_update(crc, bytes + crc_offset + 4, size - crc_offset - 4);
}

}  // namespace ett::host
