// pci_handoff.cpp: the USB legacy handoff on the machine: PCI configuration mechanism #1 and MMIO through a
// pointer (paging is off).
#include "drivers/usb/pci_handoff.h"

#include "arch/x86/pci.h"
#include "drivers/console/console.h"
#include "drivers/storage/kernel_hardware.h"
#include "drivers/usb/legacy_handoff.h"

namespace ett::drivers::usb {

namespace {

namespace pci = x86::pci;

class PciUsbFunction final : public UsbFunction {
 public:
  explicit PciUsbFunction(pci::Address address) : m_address(address) {}
  uint32_t config_read32(uint8_t offset) override { return pci::read32(m_address, offset); }
  void config_write16(uint8_t offset, uint16_t value) override { pci::write16(m_address, offset, value); }
  void config_write32(uint8_t offset, uint32_t value) override { pci::write32(m_address, offset, value); }
  RegisterWindow& mmio(uint32_t base) override {
    m_window = storage::MmioWindow(base);
    return m_window;
  }

 private:
  pci::Address m_address;
  storage::MmioWindow m_window;
};

}  // namespace

HandoffSummary hand_off_all_controllers(uint64_t tsc_hz) {
  HandoffSummary summary{};
  storage::TscClock clock(tsc_hz);
  pci::for_each_function([&](pci::Address address) {
    if (pci::read8(address, pci::kClassCode) != kClassSerialBus ||
        pci::read8(address, pci::kSubclass) != kSubclassUsb)
      return;
    PciUsbFunction function(address);
    const Report report = hand_off(function, clock);
    char line[192];
    describe(report, line, sizeof(line));
    console::print("ETT: USB %02x:%02x.%u %s\n", address.bus, address.slot, address.function, line);
    ++summary.controllers;
    if (firmware_was_active(report)) ++summary.firmware_active;
  });
  if (summary.controllers == 0) console::write("ETT: USB: no USB host controller\n");
  return summary;
}

}  // namespace ett::drivers::usb
