// pci_lpt.cpp: the PCI scan for a parallel-port card that can do input (by class or from the card list), its
// BARs, and I/O decoding on.
#include "drivers/probe/pci_lpt.h"

#include "drivers/console/console.h"

namespace ett::drivers {

namespace {

// Subsystem IDs are not needed: the device ID already names the chip's port layout.
PciLpt::Identity identify(x86::pci::Address a) {
  return {x86::pci::read16(a, x86::pci::kVendorId), x86::pci::read16(a, x86::pci::kDeviceId),
          x86::pci::read8(a, x86::pci::kClassCode), x86::pci::read8(a, x86::pci::kSubclass),
          x86::pci::read8(a, x86::pci::kProgIf)};
}

void read_bars(x86::pci::Address a, x86::pci::Bar* bars) {
  for (uint8_t index = 0; index < PciLpt::kBarCount; ++index) {
    auto bar = x86::pci::read_bar(a, index);
    if (!bar) continue;
    bars[index] = *bar;
    if (bar->is_64bit) ++index;  // its high half stays an empty entry
  }
}

}  // namespace

Result<PciLpt> PciLpt::find() {
  const char* card_problem =
      nullptr;  // a known card found without its BAR: the reason, when no card is taken
  auto found = x86::pci::find_first([&](x86::pci::Address a) {
    const Identity id = identify(a);
    const Match m = match(id);
    switch (m.verdict) {
      case Verdict::NotOurs:
        return false;
      case Verdict::SkipInterface:
        console::print(
            "ETT: pci-lpt: skipping the card at PCI %02x:%02x.%x (class 07/01, prog-if %02x: %s)\n", a.bus,
            a.slot, a.function, id.prog_if, interface_name(id.prog_if));
        return false;
      case Verdict::SkipUnknownCombo:
        console::print(
            "ETT: pci-lpt: skipping the card %04x:%04x at PCI %02x:%02x.%x (class 07/%02x: not in the list "
            "of "
            "serial/parallel cards)\n",
            id.vendor, id.device, a.bus, a.slot, a.function, id.subclass);
        return false;
      case Verdict::Take:
        break;
    }
    if (!m.card) return true;
    x86::pci::Bar bars[kBarCount] = {};
    read_bars(a, bars);
    auto registers = card_registers(*m.card, bars);
    if (registers) return true;
    card_problem = registers.error().message;
    console::print("ETT: pci-lpt: skipping the card at PCI %02x:%02x.%x: %s\n", a.bus, a.slot, a.function,
                   card_problem);
    return false;
  });
  if (!found) {
    if (card_problem) return fail(card_problem);
    return fail(
        "probe=pci-lpt: no PCI parallel-port card that can read its lines (class 0x07/0x01, programming "
        "interface 01 bidirectional, 02 ECP or 03 IEEE 1284, or a card of the list) found");
  }
  PciLpt card{};
  card.pci = *found;
  const Identity id = identify(card.pci);
  card.vendor = id.vendor;
  card.device = id.device;
  card.class_code = id.class_code;
  card.subclass = id.subclass;
  card.prog_if = id.prog_if;
  card.card = known_card(id.vendor, id.device);
  x86::pci::Bar bars[kBarCount] = {};
  read_bars(card.pci, bars);
  if (card.card) {
    ETT_TRY_ASSIGN(card.registers, card_registers(*card.card, bars));
  } else {
    ETT_TRY_ASSIGN(card.registers, choose_registers(bars));
  }
  const uint16_t command = x86::pci::read16(card.pci, x86::pci::kCommand);
  x86::pci::write16(card.pci, x86::pci::kCommand, static_cast<uint16_t>(command | x86::pci::kIoSpace));
  return card;
}

}  // namespace ett::drivers
