// pci_lpt.h: finds a PCI/PCIe parallel-port card (class 0x07, subclass 0x01) and its SPP registers' I/O BAR.
#pragma once

#include <stdint.h>

#include "arch/x86/pci.h"
#include "ett/result.h"

namespace ett::drivers {

struct PciLpt {
  x86::pci::Address pci;
  uint16_t io_base;  // the SPP block (data, status, control) of the card's first I/O BAR

  // Scans PCI, enables I/O decoding, and returns the first card's first I/O BAR of at least 3 ports.
  static Result<PciLpt> find();

  static constexpr uint8_t kClassCommunication = 0x07;
  static constexpr uint8_t kSubclassParallel = 0x01;
};

}  // namespace ett::drivers
