// runtime.cpp: the freestanding C++ runtime: global constructors, ABI stubs, and the mem* functions gcc may
// emit.
#include "runtime/runtime.h"

#include <stddef.h>
#include <stdint.h>

#include "runtime/panic.h"

extern "C" {
using Constructor = void (*)();
extern Constructor __init_array_start[];
extern Constructor __init_array_end[];
}

namespace ett::runtime {

void run_global_constructors() {
  for (Constructor* constructor = __init_array_start; constructor != __init_array_end; ++constructor)
    (*constructor)();
}

}  // namespace ett::runtime

extern "C" {

void* __dso_handle = nullptr;

void __cxa_pure_virtual() {
  ett::panic("pure virtual function called");
}

// The kernel never exits, so destructors of globals are never registered for anything.
int __cxa_atexit(void (*)(void*), void*, void*) {
  return 0;
}

// gcc turns byte loops into calls to these very functions; keep it from doing so inside them.
#define ETT_NO_LOOP_PATTERNS __attribute__((optimize("no-tree-loop-distribute-patterns")))

ETT_NO_LOOP_PATTERNS void* memcpy(void* __restrict dest, const void* __restrict src, size_t size) {
  auto* d = static_cast<uint8_t*>(dest);
  const auto* s = static_cast<const uint8_t*>(src);
  if (((reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s)) & 3) == 0) {
    for (; size >= 4; size -= 4, d += 4, s += 4)
      *reinterpret_cast<uint32_t*>(d) = *reinterpret_cast<const uint32_t*>(s);
  }
  while (size--) *d++ = *s++;
  return dest;
}

ETT_NO_LOOP_PATTERNS void* memset(void* dest, int value, size_t size) {
  auto* d = static_cast<uint8_t*>(dest);
  const auto byte = static_cast<uint8_t>(value);
  if ((reinterpret_cast<uintptr_t>(d) & 3) == 0) {
    const uint32_t word = byte * 0x01010101u;
    for (; size >= 4; size -= 4, d += 4) *reinterpret_cast<uint32_t*>(d) = word;
  }
  while (size--) *d++ = byte;
  return dest;
}

ETT_NO_LOOP_PATTERNS void* memmove(void* dest, const void* src, size_t size) {
  auto* d = static_cast<uint8_t*>(dest);
  const auto* s = static_cast<const uint8_t*>(src);
  if (d < s) {
    while (size--) *d++ = *s++;
  } else if (d > s) {
    while (size--) d[size] = s[size];
  }
  return dest;
}

ETT_NO_LOOP_PATTERNS int memcmp(const void* a, const void* b, size_t size) {
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < size; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

}  // extern "C"
