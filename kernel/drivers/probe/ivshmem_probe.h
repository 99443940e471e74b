// ivshmem_probe.h: the QEMU virtual probe: an ivshmem-plain PCI device whose BAR2 is memory shared with the
// host. Byte 0 carries the lines D7..D0; the control block (ett/virtual_probe.h) carries the handshake.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/idle_poll.h"
#include "arch/x86/io.h"
#include "arch/x86/pci.h"
#include "ett/result.h"
#include "ett/virtual_probe.h"

namespace ett::drivers {

class IvshmemProbe {
 public:
  // Scans PCI for 1af4:1110, enables memory decoding and maps BAR2 (paging is off: physical = virtual).
  static Result<IvshmemProbe> find();

  volatile uint8_t* lines() const { return m_base + vprobe::kLinesOffset; }
  volatile vprobe::Control* control() const {
    return reinterpret_cast<volatile vprobe::Control*>(m_base + vprobe::kControlOffset);
  }
  uint32_t physical_address() const { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(m_base)); }
  uint64_t size() const { return m_size; }
  x86::pci::Address pci_address() const { return m_pci; }

 private:
  IvshmemProbe(x86::pci::Address pci, volatile uint8_t* base, uint64_t size)
      : m_pci(pci), m_base(base), m_size(size) {}

  static constexpr uint8_t kSharedMemoryBar = 2;
  // Where a BAR moved below 4 GiB may go: QEMU's RAM below 4 GiB ends by 0xE0000000 on pc and q35 alike, and
  // 0xFEC00000 up holds the IOAPIC, HPET, LAPIC and the firmware flash.
  static constexpr uint64_t kLowWindowFloor = 0xE0000000;
  static constexpr uint64_t kLowWindowCeiling = 0xFEC00000;

  x86::pci::Address m_pci;
  volatile uint8_t* m_base;
  uint64_t m_size;
};

// The capture loop's Source: one byte load from the shared page.
struct IvshmemLines {
  volatile uint8_t* lines;
  [[gnu::always_inline]] uint8_t read() const { return *lines; }
  // The capture loop's idle step (capture/capture_loop.h).
  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t idle(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    return x86::idle_poll_memory<kFiltered>(lines, last, mask, countdown);
  }
};

// The capture loop's link to the host through the control block (capture::StopRules' Host).
struct IvshmemHost {
  volatile vprobe::Control* control;

  void capture_started(uint64_t start_tsc) {
    control->capture_start_tsc = start_tsc;
    control->state = static_cast<uint32_t>(vprobe::KernelState::Capturing);  // after the initial read
  }
  // Called at every stop check, never per poll: the clock and heartbeat stores cost nothing on the idle step.
  [[gnu::always_inline]] bool stop_requested() const {
    uint32_t now = static_cast<uint32_t>(x86::rdtsc() >> 8);
    control->clock_256 = now;
    control->heartbeat = control->heartbeat + 1;
    // The host's hold (vprobe::Control::hold_256): wait here until the host has made the write that was
    // due. Neither clock nor heartbeat is published meanwhile: no poll reads the lines during the wait, and
    // the clock the host extrapolates from stays the one of a stop check.
    for (uint32_t hold = control->hold_256; hold != 0 && static_cast<int32_t>(now - hold) >= 0;
         hold = control->hold_256) {
      if (control->command == static_cast<uint32_t>(vprobe::HostCommand::Stop)) return true;
      x86::out8(vprobe::kHoldWaitPort, 0);
    }
    return control->command == static_cast<uint32_t>(vprobe::HostCommand::Stop);
  }
};

}  // namespace ett::drivers
