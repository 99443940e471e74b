// uart_lines.h: the capture loop's Source for a UART probe: one `in` of the modem-status register per poll.
//
// The idle step is arch/x86/idle_poll.h's port loop on the MSR port, comparing the MSR's input and delta
// bits of the watched lines with the MSR those lines read with no delta (UartMsr::watched/status): a
// change of an input, or a delta bit the UART latched for a pulse that came and went between two polls,
// leaves it. Only then (and at each stop check) is the MSR turned into lines D0..D3 (UartMsr::lines). A
// short pulse gives two results from the one read: the lines with the pulsed inputs toggled, then the lines
// as read; both carry the pulsed lines in bits 7:4 as a marker, which the engine turns into
// format::kEventShortPulse on the records and clears (engine/probe_engine.cpp). So the loop must run with
// filter= limited to D0..D3 (the engine always does): then bits 7:4 never count as a change.
// The trigger wait and mode=calibrate use read(): the inputs only, no pulse.
#pragma once

#include <stdint.h>

#include "arch/x86/idle_poll.h"
#include "arch/x86/io.h"
#include "drivers/probe/uart_probe.h"
#include "ett/trace_format.h"

namespace ett::drivers {

// The MSR's place: an I/O port (on-board UARTs, PCI cards with an I/O BAR) or a byte of memory (PCI cards
// with a memory BAR, e.g. the Oxford OXPCIe95x).
struct UartMsrPort {
  uint16_t port;
  [[gnu::always_inline]] uint8_t read() const { return x86::in8(port); }
  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t poll(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    return x86::idle_poll_port<kFiltered>(port, last, mask, countdown);
  }
};
struct UartMsrMemory {
  const volatile uint8_t* msr;
  [[gnu::always_inline]] uint8_t read() const { return *msr; }
  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t poll(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    return x86::idle_poll_memory<kFiltered>(msr, last, mask, countdown);
  }
};

template <typename Msr>
struct UartLinesAt {
  Msr msr;
  mutable uint8_t pending = 0;  // the second result of a short pulse (never 0: it carries a marker)

  [[gnu::always_inline]] uint8_t read() const { return UartMsr::lines(msr.read()); }

  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t idle(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    if (pending != 0) [[unlikely]] {
      const uint8_t second = pending;
      pending = 0;
      return second;
    }
    const uint8_t value =
        msr.template poll<kFiltered>(UartMsr::status(last), UartMsr::watched(mask), countdown);
    if (countdown == 0) return static_cast<uint8_t>(last);  // the stop check's turn: no change in this poll
    const UartMsr::Change change = UartMsr::change(value, last, mask);
    pending = change.second;
    return change.first;
  }
};
using UartLines = UartLinesAt<UartMsrPort>;
using UartMemoryLines = UartLinesAt<UartMsrMemory>;

// TEST ONLY (uart-selftest=1 with probe=uart-loopback): before each poll, while the sequence lasts, the
// kernel writes the next MCR value itself (loopback bit set), so that a machine with no way to drive the
// UART from outside (Bochs) captures a known sequence: D1 (DSR), D2 (CTS), D3 (RI), D0 (DCD) rise one by one,
// then all four fall in one read; under layout=2x4 (the only one it is built for: the capture loop's size
// limit) probe 1's codes 2, 6, 14, 15, 0.
struct UartSelfTestLines : UartLines {
  static constexpr format::Layout kOnlyLayout = format::Layout::Double2x4;
  static constexpr uint8_t kMcrSequence[] = {0x11, 0x13, 0x17, 0x1F, 0x10};
  uint16_t mcr_port;
  mutable const uint8_t* next = kMcrSequence;  // the next value to write (the last one is written again)

  UartSelfTestLines(uint16_t msr, uint16_t mcr) : UartLines{{msr}}, mcr_port(mcr) {}

  // The start of a loop (the capture's first read, and the engine's timing of the stop check before it):
  // every output off again and the sequence from its start.
  [[gnu::always_inline]] uint8_t read() const {
    x86::out8(mcr_port, UartProbe::kLoop);
    next = kMcrSequence;
    return UartLines::read();
  }

  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t idle(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    x86::out8(mcr_port, *next);  // branch-free: the last value again changes nothing
    next += next != kMcrSequence + sizeof(kMcrSequence) - 1;
    return UartLines::idle<kFiltered>(last, mask, countdown);
  }
};

}  // namespace ett::drivers
