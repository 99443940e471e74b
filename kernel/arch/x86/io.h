// io.h: x86 port I/O. The only place in the kernel with inline assembly for in/out.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lib/io_ports.h"

namespace ett::x86 {

inline uint8_t in8(uint16_t port) {
  uint8_t value;
  asm volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}

inline uint16_t in16(uint16_t port) {
  uint16_t value;
  asm volatile("inw %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}

inline uint32_t in32(uint16_t port) {
  uint32_t value;
  asm volatile("inl %1, %0" : "=a"(value) : "Nd"(port));
  return value;
}

inline void out8(uint16_t port, uint8_t value) {
  asm volatile("outb %0, %1" : : "a"(value), "Nd"(port));
}
inline void out16(uint16_t port, uint16_t value) {
  asm volatile("outw %0, %1" : : "a"(value), "Nd"(port));
}
inline void out32(uint16_t port, uint32_t value) {
  asm volatile("outl %0, %1" : : "a"(value), "Nd"(port));
}

// Reads `count` 16-bit words from `port` into `buffer` (rep insw).
inline void rep_in16(uint16_t port, void* buffer, size_t count) {
  asm volatile("rep insw" : "+D"(buffer), "+c"(count) : "d"(port) : "memory");
}

// Writes `count` 16-bit words from `buffer` to `port` (rep outsw).
inline void rep_out16(uint16_t port, const void* buffer, size_t count) {
  asm volatile("rep outsw" : "+S"(buffer), "+c"(count) : "d"(port) : "memory");
}

// A device's block of consecutive ports, addressed by the device's own register enum.
class IoWindow {
 public:
  constexpr explicit IoWindow(uint16_t base) : m_base(base) {}

  template <typename Reg>
  uint8_t in8(Reg reg) const {
    return x86::in8(port(reg));
  }
  template <typename Reg>
  uint16_t in16(Reg reg) const {
    return x86::in16(port(reg));
  }
  template <typename Reg>
  void out8(Reg reg, uint8_t value) const {
    x86::out8(port(reg), value);
  }
  template <typename Reg>
  void rep_in16(Reg reg, void* buffer, size_t count) const {
    x86::rep_in16(port(reg), buffer, count);
  }
  template <typename Reg>
  void rep_out16(Reg reg, const void* buffer, size_t count) const {
    x86::rep_out16(port(reg), buffer, count);
  }
  constexpr uint16_t base() const { return m_base; }

 private:
  template <typename Reg>
  constexpr uint16_t port(Reg reg) const {
    return static_cast<uint16_t>(m_base + static_cast<uint16_t>(reg));
  }
  uint16_t m_base;
};

// The real ports, for drivers written against lib::IoPorts.
class CpuIoPorts final : public lib::IoPorts {
 public:
  uint8_t in8(uint16_t port) override { return x86::in8(port); }
  void out8(uint16_t port, uint8_t value) override { x86::out8(port, value); }
};

}  // namespace ett::x86
