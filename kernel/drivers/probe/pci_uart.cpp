// pci_uart.cpp: the PCI scan for a serial card on configuration space, and the card's decoding on.
#include "drivers/probe/pci_uart.h"

namespace ett::drivers {

namespace {

class ConfigSpace final : public PciUart::Functions {
 public:
  bool present(x86::pci::Address a) override {
    return x86::pci::read16(a, x86::pci::kVendorId) != x86::pci::kNoDevice;
  }
  bool multifunction(x86::pci::Address a) override {
    return x86::pci::read8(a, x86::pci::kHeaderType) & x86::pci::kHeaderMultiFunction;
  }
  PciUart::Identity identity(x86::pci::Address a) override {
    return {x86::pci::read16(a, x86::pci::kVendorId), x86::pci::read16(a, x86::pci::kDeviceId),
            x86::pci::read8(a, x86::pci::kClassCode), x86::pci::read8(a, x86::pci::kSubclass),
            x86::pci::read8(a, x86::pci::kProgIf)};
  }
  void read_bars(x86::pci::Address a, x86::pci::Bar* bars) override {
    for (uint8_t index = 0; index < PciUart::kBarCount; ++index) {
      auto bar = x86::pci::read_bar(a, index);
      if (!bar) continue;
      bars[index] = *bar;
      if (bar->is_64bit) ++index;  // its high half stays an empty entry
    }
  }
};

}  // namespace

Result<PciUart> PciUart::find(const x86::pci::Address* wanted) {
  ConfigSpace space;
  ETT_TRY_ASSIGN(PciUart card, choose(space, wanted));
  const uint16_t command = x86::pci::read16(card.pci, x86::pci::kCommand);
  const uint16_t decode = card.registers.is_io ? x86::pci::kIoSpace : x86::pci::kMemorySpace;
  x86::pci::write16(card.pci, x86::pci::kCommand, static_cast<uint16_t>(command | decode));
  return card;
}

}  // namespace ett::drivers
