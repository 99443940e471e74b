// uart_model.h: a register model of a 16550-family UART (8250 .. 16C950, one with a broken loopback, none at
// all) on lib::IoPorts, for the UART probe's tests (uart_probe_test.cpp, pci_uart_test.cpp).
#pragma once

#include <stdint.h>

#include "drivers/probe/uart_probe.h"
#include "lib/io_ports.h"

namespace ett::drivers {

inline constexpr uint16_t kCom2 = 0x2F8;
inline constexpr uint16_t kCom1 = 0x3F8;

struct UartModel final : lib::IoPorts {
  enum class Kind { U8250, U16450, U16550, U16550A, U16C950, NoLoopback, Absent };
  Kind kind;
  uint16_t base;
  uint8_t ier = 0x05, lcr = 0x03, mcr = 0x0B, scr = 0x00, efr = 0, acr = 0, dll = 1, dlm = 0;
  bool fifo = false;
  uint8_t inputs = 0;  // MSR bits 7:4 as the pins drive them
  uint8_t deltas = 0;  // MSR bits 3:0 latched since the last read
  int accesses = 0;

  explicit UartModel(Kind k, uint16_t b = kCom2) : kind(k), base(b) {}

  bool dlab() const { return lcr & 0x80; }
  bool is950() const { return kind == Kind::U16C950; }
  uint8_t msr() {
    if (mcr & 0x10) {
      if (kind == Kind::NoLoopback) return inputs;
      return static_cast<uint8_t>((mcr & 0x0C) << 4 | (mcr & 0x02) << 3 | (mcr & 0x01) << 5);
    }
    const uint8_t value = static_cast<uint8_t>(inputs | deltas);
    deltas = 0;
    return value;
  }
  uint8_t in8(uint16_t port) override {
    ++accesses;
    if (kind == Kind::Absent || port < base || port >= base + 8) return 0xFF;
    switch (port - base) {
      case 0:
        return dlab() ? dll : 0;
      case 1:
        return dlab() ? dlm : ier;
      case 2:
        if (is950() && lcr == 0xBF) return efr;
        if (!fifo) return 0x01;
        return kind == Kind::U16550 ? 0x81 : (kind == Kind::U8250 || kind == Kind::U16450) ? 0x01 : 0xC1;
      case 3:
        return lcr;
      case 4:
        return mcr;
      case 5:
        if (is950() && (acr & 0x40)) {
          switch (scr) {
            case 0x08:
              return 0x16;
            case 0x09:
              return 0xC9;
            case 0x0A:
              return 0x54;
          }
          return 0;
        }
        return 0x60;
      case 6:
        return msr();
      case 7:
        return kind == Kind::U8250 ? 0xFF : scr;
    }
    return 0xFF;
  }
  void out8(uint16_t port, uint8_t value) override {
    ++accesses;
    if (kind == Kind::Absent || port < base || port >= base + 8) return;
    switch (port - base) {
      case 0:
        if (dlab()) dll = value;
        break;
      case 1:
        if (dlab())
          dlm = value;
        else
          ier = value & 0x0F;
        break;
      case 2:
        if (is950() && lcr == 0xBF)
          efr = value;
        else
          fifo = value & 1;
        break;
      case 3:
        lcr = value;
        break;
      case 4:
        mcr = value & 0x1F;
        break;
      case 5:
        if (is950() && (efr & 0x10) && scr == 0) acr = value;
        break;
      case 7:
        scr = value;
        break;
    }
  }
  // A change of the pins: the UART latches it in the delta bit (RI only on its trailing edge, 1 -> 0).
  void drive(uint8_t new_inputs) {
    const uint8_t changed = (inputs ^ new_inputs) & 0xF0;
    uint8_t d = 0;
    if (changed & UartMsr::kCts) d |= UartMsr::kDeltaCts;
    if (changed & UartMsr::kDsr) d |= UartMsr::kDeltaDsr;
    if (changed & UartMsr::kDcd) d |= UartMsr::kDeltaDcd;
    if ((inputs & UartMsr::kRi) && !(new_inputs & UartMsr::kRi)) d |= UartMsr::kTrailingEdgeRi;
    deltas |= d;
    inputs = new_inputs & 0xF0;
  }
};

}  // namespace ett::drivers
