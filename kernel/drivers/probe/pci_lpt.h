// pci_lpt.h: a PCI/PCIe parallel-port card (class 0x07/0x01 with an interface that can do input): which card,
// its SPP registers (the first I/O BAR) and its ECR (the second I/O BAR, as Linux's parport_pc takes it).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/pci.h"
#include "ett/result.h"

namespace ett::drivers {

struct PciLpt {
  static constexpr uint8_t kClassCommunication = 0x07;
  static constexpr uint8_t kSubclassParallel = 0x01;
  static constexpr size_t kBarCount = 6;
  // The ECP registers (FIFO, config B, ECR) at the start of the second I/O BAR: the ECR is the third.
  static constexpr uint16_t kEcrInBar = 2;
  // Programming interfaces of class 07/01 (PCI code and ID assignment specification).
  enum ProgIf : uint8_t {
    kSpp = 0x00,             // output only
    kBidirectional = 0x01,   // PS/2 style
    kEcp = 0x02,             // ECP 1.x
    kIeee1284 = 0x03,        // IEEE 1284 controller
    kIeee1284Target = 0xFE,  // the printer's side of the cable
  };

  // The registers chosen from a card's BARs.
  struct Registers {
    uint8_t spp_bar;
    uint16_t spp_base;  // data, status, control
    uint8_t ecr_bar;    // valid when ecr_port != 0
    uint16_t ecr_port;  // 0: the card has no second I/O BAR
  };

  x86::pci::Address pci;
  uint16_t vendor;
  uint16_t device;
  uint8_t prog_if;
  Registers registers;

  // Scans PCI for the first card whose interface can do input, enables its I/O decoding and chooses its
  // registers. Cards skipped on the way (output-only, the target side) are named on the console.
  static Result<PciLpt> find();

  // Whether class/subclass/programming interface describe a host-side parallel port that can read its lines.
  static bool can_do_input(uint8_t class_code, uint8_t subclass, uint8_t prog_if);
  static const char* interface_name(uint8_t prog_if);
  // The SPP block is the first I/O BAR below 64 KiB with room for data/status/control; the ECR block is the
  // next I/O BAR after it. `bars` holds kBarCount entries as read_bar() returned them (size 0: unimplemented;
  // the second half of a 64-bit BAR has size 0 too).
  static Result<Registers> choose_registers(const x86::pci::Bar* bars);
};

}  // namespace ett::drivers
