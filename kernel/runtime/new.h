// new.h: placement new for the freestanding kernel (built with -nostdinc++, so there is no <new>).
#pragma once

#include <stddef.h>

[[nodiscard]] inline void* operator new(size_t, void* place) noexcept {
  return place;
}
[[nodiscard]] inline void* operator new[](size_t, void* place) noexcept {
  return place;
}
inline void operator delete(void*, void*) noexcept {}
inline void operator delete[](void*, void*) noexcept {}
