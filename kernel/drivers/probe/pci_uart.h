// pci_uart.h: a PCI/PCIe serial card opened as the capture's probe: which card, which BAR holds its UARTs,
// at which offset and spacing, and whether they are I/O ports or memory-mapped.
//
// Two ways to match a card. A known card, by vendor:device, with the layout Linux's 8250_pci tables give it
// (WCH CH38x: the UARTs at BAR0 + 0xc0, 8 apart; Oxford OXPCIe95x: memory BAR0 + 0x1000, 0x200 apart;
// MosChip MCS9900 and ASIX AX99100: one UART per function at the start of I/O BAR0). Any other function of
// class 0x07/0x00 (serial controller) with a 16550-family programming interface (00..06) is taken as a
// generic card: its first I/O BAR of at least 8 ports, else its first memory BAR, register stride 1.
// The UART itself (answer, loopback test, kind, modes) is drivers/probe/uart_probe.h's.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/pci.h"
#include "ett/result.h"
#include "lib/io_ports.h"

namespace ett::drivers {

struct PciUart {
  static constexpr uint8_t kClassCommunication = 0x07;
  static constexpr uint8_t kSubclassSerial = 0x00;
  static constexpr uint8_t kProgIfMax16550Family = 0x06;  // 00 8250 ... 06 16950
  static constexpr size_t kBarCount = 6;
  static constexpr uint8_t kUartRegisters = 8;

  // Where a card's UART n is: BAR `bar` + first + n * stride; register r at + (r << shift).
  struct Layout {
    uint8_t bar;
    uint16_t first;
    uint16_t stride;
    uint8_t shift;
    uint8_t ports;
  };
  struct KnownCard {
    uint16_t vendor;
    uint16_t device;
    Layout layout;
    const char* name;
  };
  struct Identity {
    uint16_t vendor;
    uint16_t device;
    uint8_t class_code;
    uint8_t subclass;
    uint8_t prog_if;
  };
  enum class Verdict : uint8_t {
    Take,     // a known card, or class 07/00 with a 16550-family interface
    NotOurs,  // anything else (07/00 with a modem or unknown interface too)
  };
  struct Match {
    Verdict verdict;
    const KnownCard* card;  // Take by vendor:device; nullptr by class
  };
  // The UART chosen: I/O port base, or physical address of register 0.
  struct Registers {
    uint8_t bar;
    bool is_io;
    uint64_t base;
    uint8_t shift;
    uint64_t offset;  // of the UART in its BAR
  };

  // The PCI functions as the scan reads them: the kernel's is configuration space (pci_uart.cpp), a host
  // test's a model.
  class Functions {
   public:
    virtual bool present(x86::pci::Address a) = 0;
    virtual bool multifunction(x86::pci::Address a) = 0;  // of function 0
    virtual Identity identity(x86::pci::Address a) = 0;
    virtual void read_bars(x86::pci::Address a, x86::pci::Bar* bars) = 0;  // kBarCount entries

   protected:
    ~Functions() = default;
  };

  x86::pci::Address pci;
  Identity id;
  const KnownCard* card;  // nullptr: matched by class
  Registers registers;

  // The first function match() takes whose port 0 is usable, in bus/slot/function order; with `wanted`,
  // only the function there, which must be a serial card. A known card without its BAR is named and
  // skipped.
  static Result<PciUart> choose(Functions& functions, const x86::pci::Address* wanted);
  // choose() on configuration space, then the card's I/O or memory decoding on (kernel only).
  static Result<PciUart> find(const x86::pci::Address* wanted);

  static const KnownCard* known_card(uint16_t vendor, uint16_t device);
  static const KnownCard* known_cards();
  static const size_t kKnownCardCount;
  static Match match(const Identity& id);
  // A generic card's layout: its first assigned I/O BAR below 64 KiB with 8 ports, else its first assigned
  // memory BAR below 4 GiB with 8 bytes; one UART at its start.
  static Result<Layout> generic_layout(const x86::pci::Bar* bars);
  // UART `port` of `layout` in `bars` (kBarCount entries as read_bar() returned them): the BAR must be
  // assigned and hold the UART's eight registers (I/O below 64 KiB, memory below 4 GiB).
  static Result<Registers> port_registers(const Layout& layout, const x86::pci::Bar* bars, uint8_t port);
};

// Physical memory as bytes, so that a memory-mapped UART's setup runs against a model in the host tests.
class MemoryBus {
 public:
  virtual uint8_t read8(uint64_t address) = 0;
  virtual void write8(uint64_t address, uint8_t value) = 0;

 protected:
  ~MemoryBus() = default;
};

// A memory-mapped UART seen as lib::IoPorts: "port" r (UartProbe's register offsets, base 0) is the byte at
// base + (r << shift). UartProbe's open/arm/restore take it as they take the CPU's ports.
class MemoryUartPorts final : public lib::IoPorts {
 public:
  MemoryUartPorts(MemoryBus& bus, uint64_t base, uint8_t shift) : m_bus(&bus), m_base(base), m_shift(shift) {}
  uint8_t in8(uint16_t reg) override { return m_bus->read8(address(reg)); }
  void out8(uint16_t reg, uint8_t value) override { m_bus->write8(address(reg), value); }
  uint64_t address(uint16_t reg) const { return m_base + (uint64_t{reg} << m_shift); }

 private:
  MemoryBus* m_bus;
  uint64_t m_base;
  uint8_t m_shift;
};

// The kernel's MemoryBus: physical memory as the kernel maps it (identity, below 4 GiB).
class PhysicalMemoryBus final : public MemoryBus {
 public:
  uint8_t read8(uint64_t address) override { return *pointer(address); }
  void write8(uint64_t address, uint8_t value) override { *pointer(address) = value; }
  static volatile uint8_t* pointer(uint64_t address) {
    return reinterpret_cast<volatile uint8_t*>(static_cast<uintptr_t>(address));
  }
};

}  // namespace ett::drivers
