// pci_lpt.cpp: the PCI parallel-port scan: class 07/01, first I/O BAR that can hold data/status/control.
#include "drivers/pci_lpt.h"

namespace ett::drivers {

Result<PciLpt> PciLpt::find() {
  auto found = x86::pci::find_class(kClassCommunication, kSubclassParallel);
  if (!found) return fail("probe=pci-lpt: no PCI parallel-port card (class 0x07, subclass 0x01) found");
  const x86::pci::Address pci = *found;
  for (uint8_t index = 0; index < 6; ++index) {
    auto bar = x86::pci::read_bar(pci, index);
    if (!bar) continue;
    if (bar->is_64bit) ++index;
    if (!bar->is_io || bar->size < 3 || bar->address == 0 || bar->address > 0xFFFF) continue;
    const uint16_t command = x86::pci::read16(pci, x86::pci::kCommand);
    x86::pci::write16(pci, x86::pci::kCommand, static_cast<uint16_t>(command | x86::pci::kIoSpace));
    return PciLpt{pci, static_cast<uint16_t>(bar->address)};
  }
  return fail("probe=pci-lpt: the PCI parallel-port card has no usable I/O BAR");
}

}  // namespace ett::drivers
