// hardware.h: what a storage driver needs from the machine (a device's registers, a clock, DMA memory) as
// small interfaces, so that the same driver source runs in the kernel and against register models on the
// host.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/result.h"
#include "lib/tsc_math.h"

namespace ett::drivers::storage {

// 32-bit registers of one memory BAR (AHCI's ABAR, NVMe's BAR0). 64-bit registers are two 32-bit halves,
// low half first: both specifications allow it, and a 32-bit kernel has nothing wider.
class RegisterWindow {
 public:
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;

  uint64_t read64(uint32_t offset) {
    const uint32_t low = read32(offset);
    return (uint64_t{read32(offset + 4)} << 32) | low;
  }
  void write64(uint32_t offset, uint64_t value) {
    write32(offset, static_cast<uint32_t>(value));
    write32(offset + 4, static_cast<uint32_t>(value >> 32));
  }

 protected:
  ~RegisterWindow() = default;
};

// The time base of every deadline: the TSC in the kernel, a simulated clock in the tests (so that a
// 2-second timeout of a broken device model takes no real time).
class Clock {
 public:
  virtual uint64_t now() = 0;
  virtual uint64_t hz() const = 0;
  // Called between two polls of a register (pause in the kernel).
  virtual void relax() {}

  uint64_t deadline_after_ms(uint32_t ms) { return now() + lib::ticks_for_ms(ms, hz()); }

 protected:
  ~Clock() = default;
};

// Polls `done()` until it holds (ok) or `timeout_ms` pass (`message`). `done` is asked once more after the
// deadline, so a slow host that deschedules the poller between two reads cannot turn success into a timeout.
template <typename Done>
Status wait_until(Clock& clock, uint32_t timeout_ms, const char* message, Done done) {
  const uint64_t deadline = clock.deadline_after_ms(timeout_ms);
  for (;;) {
    if (done()) return {};
    if (clock.now() > deadline) return done() ? Status{} : fail(message);
    clock.relax();
  }
}

// Memory that a driver gives to its device for DMA (command lists, queues, the data bounce buffer). The
// kernel runs with paging off, so there `phys` is the pointer's own value; a host test maps a model's
// "physical" addresses onto a buffer. The kernel's areas are static arrays inside its image, so the capture
// buffer (which starts above the image) never overlaps them.
struct DmaArea {
  uint8_t* data;
  uint64_t phys;
  uint32_t size;

  uint64_t phys_of(const void* pointer) const {
    return phys + static_cast<uint64_t>(static_cast<const uint8_t*>(pointer) - data);
  }
};

// A compiler barrier: descriptors written to DMA memory are in memory before the doorbell register write that
// hands them to the device, and a completion is read from memory after the register read that saw it
// (x86 keeps DMA coherent and ordered with uncached MMIO; only the compiler has to be stopped).
inline void dma_barrier() {
  asm volatile("" : : : "memory");
}

}  // namespace ett::drivers::storage
