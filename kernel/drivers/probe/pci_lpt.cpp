// pci_lpt.cpp: the PCI scan for a parallel-port card that can do input, its BARs, and I/O decoding on.
#include "drivers/probe/pci_lpt.h"

#include "drivers/console/console.h"

namespace ett::drivers {

namespace {

bool is_parallel(x86::pci::Address a) {
  return x86::pci::read8(a, x86::pci::kClassCode) == PciLpt::kClassCommunication &&
         x86::pci::read8(a, x86::pci::kSubclass) == PciLpt::kSubclassParallel;
}

}  // namespace

Result<PciLpt> PciLpt::find() {
  auto found = x86::pci::find_first([](x86::pci::Address a) {
    if (!is_parallel(a)) return false;
    const uint8_t prog_if = x86::pci::read8(a, x86::pci::kProgIf);
    if (can_do_input(kClassCommunication, kSubclassParallel, prog_if)) return true;
    console::print("ETT: pci-lpt: skipping the card at PCI %02x:%02x.%x (class 07/01, prog-if %02x: %s)\n",
                   a.bus, a.slot, a.function, prog_if, interface_name(prog_if));
    return false;
  });
  if (!found)
    return fail(
        "probe=pci-lpt: no PCI parallel-port card that can read its lines (class 0x07/0x01, programming "
        "interface 01 bidirectional, 02 ECP or 03 IEEE 1284) found");
  PciLpt card{};
  card.pci = *found;
  card.vendor = x86::pci::read16(card.pci, x86::pci::kVendorId);
  card.device = x86::pci::read16(card.pci, x86::pci::kDeviceId);
  card.prog_if = x86::pci::read8(card.pci, x86::pci::kProgIf);
  x86::pci::Bar bars[kBarCount] = {};
  for (uint8_t index = 0; index < kBarCount; ++index) {
    auto bar = x86::pci::read_bar(card.pci, index);
    if (!bar) continue;
    bars[index] = *bar;
    if (bar->is_64bit) ++index;  // its high half stays an empty entry
  }
  ETT_TRY_ASSIGN(card.registers, choose_registers(bars));
  const uint16_t command = x86::pci::read16(card.pci, x86::pci::kCommand);
  x86::pci::write16(card.pci, x86::pci::kCommand, static_cast<uint16_t>(command | x86::pci::kIoSpace));
  return card;
}

}  // namespace ett::drivers
