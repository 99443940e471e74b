// parallel_port.h: a PC parallel port (legacy ISA or a PCI card's SPP registers) as the capture's probe.
//
// Two modes, kept apart on purpose:
//  - Input: the real probe. Control bit 5 (direction) set, as the ETT paper does, so the data lines are
//    inputs driven by the system under test. The data register is never written in this mode (writing it
//    with the direction bit clear would drive the lines against the probe's own drivers).
//  - Loopback (probe=lpt-loopback, tests only): direction bit clear, so the data register reads back the last
//    value written to it; under QEMU the monitor command `o/b 0x378 VALUE` sets it. It exercises the same
//    read path as Input, but captures nothing on real hardware.
// open() saves the control register and restore() puts it back when the capture ends.
#pragma once

#include <stdint.h>

#include "arch/x86/idle_poll.h"
#include "arch/x86/io.h"
#include "ett/result.h"

namespace ett::drivers {

class ParallelPort {
 public:
  enum class Mode : uint8_t { Input, Loopback };
  static constexpr uint16_t kDefaultBase = 0x378;

  // Fails when nothing answers at `base` (every register reads 0xFF).
  static Result<ParallelPort> open(uint16_t base, Mode mode);
  // Puts back the control register that open() found (saved_control()).
  static void restore(uint16_t base, uint8_t saved_control);

  uint16_t base() const { return m_port.base(); }
  uint16_t data_port() const { return static_cast<uint16_t>(m_port.base() + kData); }
  uint8_t saved_control() const { return m_saved_control; }
  uint8_t read_lines() const { return m_port.in8(kData); }

 private:
  enum Reg : uint8_t {
    kData = 0,
    kStatus = 1,
    kControl = 2,
  };
  enum ControlBit : uint8_t {
    kStrobe = 1u << 0,
    kAutoFeed = 1u << 1,
    kInit = 1u << 2,  // active low: keep it high so the port is not held in reset
    kSelectIn = 1u << 3,
    kIrqEnable = 1u << 4,
    kDirectionInput = 1u << 5,  // bidirectional ports: the data lines are inputs
  };

  ParallelPort(uint16_t base, uint8_t saved_control) : m_port(base), m_saved_control(saved_control) {}

  x86::IoWindow m_port;
  uint8_t m_saved_control;
};

// The capture loop's Source: one `in` from the data register (port in a register: in (%dx),%al).
struct PortLines {
  uint16_t port;
  [[gnu::always_inline]] uint8_t read() const { return x86::in8(port); }
  // The capture loop's idle step (capture/capture_loop.h).
  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t idle(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    return x86::idle_poll_port<kFiltered>(port, last, mask, countdown);
  }
};

}  // namespace ett::drivers
