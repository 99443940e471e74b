// kernel_hardware.h: the storage drivers' hardware interfaces as the kernel provides them: uncached MMIO
// through a pointer (paging is off, so a BAR's physical address is its address), the TSC as the clock.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "drivers/storage/hardware.h"

namespace ett::drivers::storage {

class MmioWindow final : public RegisterWindow {
 public:
  explicit MmioWindow(uint32_t base = 0) : m_base(base) {}
  uint32_t read32(uint32_t offset) override {
    return *reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(m_base + offset));
  }
  void write32(uint32_t offset, uint32_t value) override {
    *reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(m_base + offset)) = value;
  }

 private:
  uint32_t m_base;
};

class TscClock final : public Clock {
 public:
  explicit TscClock(uint64_t tsc_hz = 0) : m_hz(tsc_hz) {}
  uint64_t now() override { return x86::rdtsc(); }
  uint64_t hz() const override { return m_hz; }
  void relax() override { x86::pause(); }

 private:
  uint64_t m_hz;
};

// DMA memory inside the kernel image (a static array): identity-mapped, below the capture buffer.
inline DmaArea kernel_dma_area(uint8_t* data, uint32_t size) {
  return DmaArea{data, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)), size};
}

}  // namespace ett::drivers::storage
