// usb_handoff_test.cpp: the USB legacy handoff (kernel/drivers/usb/legacy_handoff) against register models of
// EHCI, xHCI and UHCI controllers whose firmware releases them, never releases them, or is odd (a capability
// list that does not start with the legacy one, registers above 4 GiB, a device that reads all-ones).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "drivers/usb/legacy_handoff.h"
#include "storage_models.h"

namespace ett::test {
namespace {

using drivers::usb::ControllerKind;
using drivers::usb::Outcome;
using drivers::usb::Report;

constexpr uint32_t kBiosOwned = 1u << 16, kOsOwned = 1u << 24;
constexpr uint32_t kSmiStatus = 0xE0000000;  // USBLEGCTLSTS write-1-to-clear bits
// OHCI: HcControl (InterruptRouting, functional state), HcCommandStatus.OCR, HcInterruptEnable/Disable.
constexpr uint32_t kOhciControl = 0x04, kOhciCommandStatus = 0x08, kOhciInterruptEnable = 0x10,
                   kOhciInterruptDisable = 0x14;
constexpr uint32_t kOhciIr = 1u << 8, kOhciOperational = 0x2u << 6, kOhciOcr = 1u << 3;

// 32-bit registers with read-only and write-1-to-clear bits, written whole or by bytes (a 16-bit PCI write).
class Registers {
 public:
  void set(uint32_t offset, uint32_t value, uint32_t read_only = 0, uint32_t write_clear = 0) {
    m_regs[offset] = {value, read_only, write_clear};
  }
  uint32_t value(uint32_t offset) const {
    auto it = m_regs.find(offset);
    return it == m_regs.end() ? 0 : it->second.value;
  }
  void write(uint32_t offset, uint32_t value, uint32_t byte_mask) {
    ++writes;
    Reg& reg = m_regs[offset];
    const uint32_t writable = byte_mask & ~reg.read_only;
    const uint32_t plain = writable & ~reg.write_clear;
    reg.value = (reg.value & ~plain) | (value & plain);
    reg.value &= ~(value & writable & reg.write_clear);
  }
  void clear_bits(uint32_t offset, uint32_t bits) { m_regs[offset].value &= ~bits; }
  int writes = 0;

 private:
  struct Reg {
    uint32_t value, read_only, write_clear;
  };
  std::map<uint32_t, Reg> m_regs;
};

class MmioModel final : public drivers::usb::RegisterWindow {
 public:
  explicit MmioModel(struct ControllerModel& owner) : m_owner(owner) {}
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;

 private:
  ControllerModel& m_owner;
};

// One USB controller: PCI configuration space, its MMIO registers at `bar`, and firmware that owns it and
// drops its semaphore after `release_after_polls` reads of USBLEGSUP once the OS-owned bit is set (never when
// unset). `legacy_in_mmio` says where USBLEGSUP is (xHCI: MMIO, EHCI: configuration space).
struct ControllerModel final : drivers::usb::UsbFunction {
  Registers config, mmio_regs;
  MmioModel window{*this};
  uint64_t bar = 0xFEBF0000;
  uint32_t legacy_offset = 0;
  bool legacy_in_mmio = false;
  std::optional<int> release_after_polls;
  std::optional<int> gone_after_polls;
  int polls_after_request = 0;
  bool gone = false;
  int mmio_maps = 0;
  bool ohci = false;
  bool ownership_change_requested = false;
  // OHCI firmware: each read of HcControl after an ownership change request brings its release closer.
  void ohci_firmware_sees_read(uint32_t offset) {
    if (!ohci || offset != kOhciControl || !ownership_change_requested || !release_after_polls) return;
    if (++polls_after_request >= *release_after_polls) mmio_regs.clear_bits(kOhciControl, kOhciIr);
  }
  uint32_t operational = 0;  // CAPLENGTH
  uint32_t halted_bit = 0;   // USBSTS HCHalted
  bool never_halts = false;

  ControllerModel(uint8_t prog_if, uint64_t bar_address, bool bar_64bit) : bar(bar_address) {
    config.set(0x00, 0x12348086, 0xFFFFFFFF);
    config.set(0x04, 0x00100006);  // memory space, bus master
    config.set(0x08, 0x0C030000u | uint32_t{prog_if} << 8 | 0x10, 0xFFFFFFFF);
    config.set(0x10, static_cast<uint32_t>(bar_address) | (bar_64bit ? 0x4 : 0x0));
    if (bar_64bit) config.set(0x14, static_cast<uint32_t>(bar_address >> 32));
  }

  Registers& legacy_registers() { return legacy_in_mmio ? mmio_regs : config; }
  // Firmware: each read of USBLEGSUP with the OS-owned bit set brings its release closer.
  void firmware_sees_read(Registers& regs, uint32_t offset) {
    if (&regs != &legacy_registers() || offset != legacy_offset) return;
    const uint32_t legsup = regs.value(offset);
    if (!(legsup & kOsOwned) || !(legsup & kBiosOwned)) return;
    ++polls_after_request;
    if (release_after_polls && polls_after_request >= *release_after_polls)
      regs.clear_bits(offset, kBiosOwned);
    if (gone_after_polls && polls_after_request >= *gone_after_polls) gone = true;
  }

  uint32_t config_read32(uint8_t offset) override {
    EXPECT_EQ(offset % 4, 0) << "unaligned configuration read";
    firmware_sees_read(config, offset);
    if (gone) return 0xFFFFFFFF;
    return config.value(offset);
  }
  void config_write16(uint8_t offset, uint16_t value) override {
    EXPECT_EQ(offset % 2, 0) << "unaligned 16-bit configuration write";
    const uint32_t shift = (offset & 2) * 8;
    config.write(offset & ~3u, uint32_t{value} << shift, 0xFFFFu << shift);
  }
  void config_write32(uint8_t offset, uint32_t value) override { config.write(offset, value, 0xFFFFFFFF); }
  drivers::usb::RegisterWindow& mmio(uint32_t base) override {
    EXPECT_EQ(base, bar) << "the registers were looked for elsewhere than BAR0";
    ++mmio_maps;
    return window;
  }
};

uint32_t MmioModel::read32(uint32_t offset) {
  m_owner.firmware_sees_read(m_owner.mmio_regs, offset);
  m_owner.ohci_firmware_sees_read(offset);
  if (m_owner.gone) return 0xFFFFFFFF;
  return m_owner.mmio_regs.value(offset);
}
void MmioModel::write32(uint32_t offset, uint32_t value) {
  if (m_owner.ohci && offset == kOhciCommandStatus) {
    m_owner.ownership_change_requested |= (value & kOhciOcr) != 0;
    return;
  }
  if (m_owner.ohci && offset == kOhciInterruptDisable) {
    m_owner.mmio_regs.clear_bits(kOhciInterruptEnable, value);
    return;
  }
  m_owner.mmio_regs.write(offset, value, 0xFFFFFFFF);
  if (offset == m_owner.operational && !(value & 1) && !m_owner.never_halts)  // Run/Stop cleared
    m_owner.mmio_regs.set(m_owner.operational + 4, m_owner.halted_bit);
}

// The controller as the firmware left it: halted (the default) or running.
void set_running(ControllerModel& model, bool running) {
  model.mmio_regs.set(model.operational, running ? 1 : 0);
  model.mmio_regs.set(model.operational + 4, running ? 0 : model.halted_bit);
}

// EHCI: HCCPARAMS.EECP at capability register 0x08 bits 15:8.
ControllerModel ehci(uint8_t eecp, uint64_t bar = 0xFEBF1000, bool bar_64bit = false) {
  ControllerModel model(0x20, bar, bar_64bit);
  model.operational = 0x20;
  model.halted_bit = 1u << 12;
  model.mmio_regs.set(0x00, 0x01000000 | model.operational, 0xFFFFFFFF);
  model.mmio_regs.set(0x08, uint32_t{eecp} << 8 | 0x12, 0xFFFFFFFF);
  set_running(model, false);
  return model;
}
// USBLEGSUP (semaphores writable, the rest read-only) and USBLEGCTLSTS (status write-1-to-clear).
void add_legacy(ControllerModel& model, Registers& regs, uint32_t offset, uint32_t legsup,
                uint32_t next_field, uint32_t control, uint32_t control_read_only) {
  regs.set(offset, legsup | next_field | 0x01, ~(kBiosOwned | kOsOwned));
  regs.set(offset + 4, control, control_read_only, kSmiStatus);
  model.legacy_offset = offset;
}

// xHCI: HCCPARAMS1.xECP at 0x10 bits 31:16, in dwords.
ControllerModel xhci(uint32_t xecp_dwords, uint64_t bar = 0xFEB00000, bool bar_64bit = true) {
  ControllerModel model(0x30, bar, bar_64bit);
  model.legacy_in_mmio = true;
  model.operational = 0x40;
  model.halted_bit = 1u << 0;
  model.mmio_regs.set(0x00, 0x01000000 | model.operational, 0xFFFFFFFF);
  model.mmio_regs.set(0x10, xecp_dwords << 16 | 0x1, 0xFFFFFFFF);
  set_running(model, false);
  return model;
}

std::string text(const Report& report) {
  char line[256];
  drivers::usb::describe(report, line, sizeof(line));
  return line;
}

TEST(UsbHandoff, EhciFirmwareReleasesAfterSomePollsBehindAnotherCapability) {
  SimClock clock;
  ControllerModel model = ehci(0x60);
  model.config.set(0x60, 0x0000680A, 0xFFFFFFFF);  // a debug port capability (ID 0x0A), next at 0x68
  add_legacy(model, model.config, 0x68, kBiosOwned, 0, 0x2001 | kSmiStatus, 0x003F0000);
  model.release_after_polls = 5;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.kind, ControllerKind::Ehci);
  EXPECT_EQ(report.outcome, Outcome::Released) << text(report);
  EXPECT_EQ(report.capability, 0x68u);
  EXPECT_EQ(model.config.value(0x68) & (kBiosOwned | kOsOwned), kOsOwned);
  EXPECT_EQ(model.config.value(0x60), 0x0000680Au) << "the other capability is left alone";
  EXPECT_EQ(report.smi_enables, 0x2001u);
  EXPECT_EQ(report.smi_enables_now, 0u);
  EXPECT_EQ(model.config.value(0x6C), 0u) << "enables off and SMI status cleared";
  EXPECT_LT(report.waited_ms, 10u);
  EXPECT_GE(model.polls_after_request, 5);
  EXPECT_EQ(text(report),
            "EHCI: handed off, the firmware released it after 0 ms; SMI enables 0x2001 turned off");
}

TEST(UsbHandoff, EhciFirmwareThatNeverReleasesIsOverruledAfterTheDeadline) {
  SimClock clock;
  ControllerModel model = ehci(0x68);
  add_legacy(model, model.config, 0x68, kBiosOwned, 0, 0x003F | 0xE000, 0);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::Forced) << text(report);
  EXPECT_GE(clock.ms(), drivers::usb::kReleaseTimeoutMs);
  EXPECT_LT(clock.ms(), drivers::usb::kReleaseTimeoutMs + 10);
  EXPECT_EQ(model.config.value(0x68) & (kBiosOwned | kOsOwned), kOsOwned)
      << "the firmware's semaphore cleared";
  EXPECT_EQ(report.smi_enables, 0xE03Fu);
  EXPECT_EQ(model.config.value(0x6C), 0u);
  EXPECT_NE(text(report).find("did not release it within 1000 ms: taken by force"), std::string::npos)
      << text(report);
}

// What QEMU's usb-ehci exposes: EECP 0x68, USBLEGSUP 0x00000001 (not owned), USBLEGCTLSTS 0xC0000000.
TEST(UsbHandoff, EhciNotOwnedByTheFirmwareIsTakenAtOnce) {
  SimClock clock;
  ControllerModel model = ehci(0x68);
  add_legacy(model, model.config, 0x68, 0, 0, 0xC0000000, 0);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::NotOwned) << text(report);
  EXPECT_EQ(model.config.value(0x68), kOsOwned | 0x01);
  EXPECT_EQ(model.config.value(0x6C), 0u);
  EXPECT_FALSE(drivers::usb::firmware_was_active(report));
  EXPECT_LT(clock.ms(), 1u) << "no wait when the firmware does not own it";
}

TEST(UsbHandoff, EhciWithoutExtendedCapabilities) {
  SimClock clock;
  ControllerModel model = ehci(0x00);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::NoCapability);
  EXPECT_EQ(model.config.writes, 0);
  EXPECT_EQ(text(report), "EHCI: no USB legacy support capability, nothing to hand off");
}

TEST(UsbHandoff, EhciCapabilityListThatLoopsOrPointsIntoTheHeader) {
  SimClock clock;
  ControllerModel looping = ehci(0x60);
  looping.config.set(0x60, 0x0000640A);
  looping.config.set(0x64, 0x0000600A);
  EXPECT_EQ(drivers::usb::hand_off(looping, clock).outcome, Outcome::BadCapability);
  ControllerModel header = ehci(0x10);
  EXPECT_EQ(drivers::usb::hand_off(header, clock).outcome, Outcome::BadCapability);
  EXPECT_EQ(looping.config.writes + header.config.writes, 0);
}

TEST(UsbHandoff, XhciLegacyCapabilityAfterSupportedProtocols) {
  SimClock clock;
  ControllerModel model = xhci(0x20);
  model.mmio_regs.set(0x80, 0x02000402, 0xFFFFFFFF);  // supported protocol USB 2.0, next 4 dwords on
  model.mmio_regs.set(0x90, 0x03000802, 0xFFFFFFFF);  // USB 3.0, next 8 dwords on
  constexpr uint32_t kReserved = 0x000E0000;          // kept as read
  add_legacy(model, model.mmio_regs, 0xB0, kBiosOwned, 0, 0xE011 | kReserved | kSmiStatus, 0x00110000);
  model.release_after_polls = 3;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.kind, ControllerKind::Xhci);
  EXPECT_EQ(report.outcome, Outcome::Released) << text(report);
  EXPECT_EQ(report.capability, 0xB0u);
  EXPECT_EQ(model.mmio_regs.value(0xB0), kOsOwned | 0x01);
  EXPECT_EQ(report.smi_enables, 0xE011u);
  EXPECT_EQ(model.mmio_regs.value(0xB4), kReserved);
  EXPECT_TRUE(drivers::usb::firmware_was_active(report));
}

TEST(UsbHandoff, ControllerLeftRunningIsHalted) {
  SimClock clock;
  ControllerModel model = xhci(0x20);
  add_legacy(model, model.mmio_regs, 0x80, 0, 0, 0, 0);
  set_running(model, true);
  model.mmio_regs.set(0x40, 0x0000000D);  // Run/Stop, interrupter enable, host system error enable
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_TRUE(report.was_running);
  EXPECT_TRUE(report.halted);
  EXPECT_EQ(model.mmio_regs.value(0x40), 0u);
  EXPECT_EQ(text(report), "xHCI: handed off, the firmware did not own it; halted it (it was running)");

  ControllerModel stuck = ehci(0x68);
  add_legacy(stuck, stuck.config, 0x68, 0, 0, 0, 0);
  set_running(stuck, true);
  stuck.never_halts = true;
  stuck.mmio_regs.set(0x28, 0x3F);  // USBINTR
  const Report stuck_report = drivers::usb::hand_off(stuck, clock);
  EXPECT_FALSE(stuck_report.halted);
  EXPECT_EQ(stuck.mmio_regs.value(0x28), 0u) << "USBINTR off";
  EXPECT_EQ(text(stuck_report),
            "EHCI: handed off, the firmware did not own it; it did not halt within 16 ms");
}

TEST(UsbHandoff, XhciFirmwareThatNeverReleases) {
  SimClock clock;
  ControllerModel model = xhci(0x20);
  add_legacy(model, model.mmio_regs, 0x80, kBiosOwned, 0, 0x0001, 0);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::Forced);
  EXPECT_EQ(model.mmio_regs.value(0x80) & (kBiosOwned | kOsOwned), kOsOwned);
  EXPECT_EQ(model.mmio_regs.value(0x84), 0u);
  EXPECT_GE(report.waited_ms, drivers::usb::kReleaseTimeoutMs);
}

// What QEMU's qemu-xhci exposes: xECP 0x20 dwords, two supported-protocol capabilities, no legacy one.
TEST(UsbHandoff, XhciWithoutLegacyCapability) {
  SimClock clock;
  ControllerModel model = xhci(0x08);
  model.mmio_regs.set(0x20, 0x02000402, 0xFFFFFFFF);
  model.mmio_regs.set(0x30, 0x03000002, 0xFFFFFFFF);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::NoCapability);
  EXPECT_EQ(model.mmio_regs.writes + model.config.writes, 0);

  set_running(model, true);  // left running by a firmware that drives it without SMM (SeaBIOS)
  const Report running = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(text(running),
            "xHCI: no USB legacy support capability, nothing to hand off; halted it (it was running)");
}

TEST(UsbHandoff, RegistersAbove4GiBAreSkippedWithoutTouchingThem) {
  SimClock clock;
  ControllerModel model = xhci(0x20, 0x4000000000, true);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::BarAbove4GiB);
  EXPECT_EQ(model.mmio_maps, 0);
  EXPECT_EQ(model.config.writes, 0) << "the BAR is read, not sized";
  EXPECT_EQ(
      text(report),
      "xHCI: registers at 0x4000000000 lie above 4 GiB: skipped (this 32-bit kernel runs with paging off), "
      "its legacy SMIs stay");
}

TEST(UsbHandoff, MemoryDecodingOffIsSkipped) {
  SimClock clock;
  ControllerModel model = ehci(0x68);
  model.config.set(0x04, 0x00100000);
  EXPECT_EQ(drivers::usb::hand_off(model, clock).outcome, Outcome::NotDecoding);
  EXPECT_EQ(model.mmio_maps, 0);
}

TEST(UsbHandoff, AllOnesConfigurationSpaceIsADeviceGone) {
  SimClock clock;
  ControllerModel model = ehci(0x68);
  model.gone = true;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::DeviceGone);
  EXPECT_EQ(model.config.writes + model.mmio_maps, 0);
  EXPECT_EQ(text(report), "USB controller: reads all-ones (device gone): skipped");
}

// Surprise removal while waiting for the firmware: the wait ends at once instead of forcing a dead device.
TEST(UsbHandoff, DeviceGoneDuringTheWait) {
  SimClock clock;
  ControllerModel model = ehci(0x68);
  add_legacy(model, model.config, 0x68, kBiosOwned, 0, 0x0001, 0);
  model.gone_after_polls = 4;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::DeviceGone) << text(report);
  EXPECT_LT(clock.ms(), 10u);
  EXPECT_EQ(model.config.value(0x68) & kBiosOwned, kBiosOwned) << "no forced write to a device that is gone";
}

TEST(UsbHandoff, UhciTrapsAreTurnedOff) {
  SimClock clock;
  ControllerModel model(0x00, 0, false);
  model.config.set(0x20, 0x0000C001);  // I/O BAR4
  model.config.set(0xC0, 0x203F | 0x0100, 0x5040, 0x8F00);
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.kind, ControllerKind::Uhci);
  EXPECT_EQ(report.outcome, Outcome::TrapsCleared) << text(report);
  EXPECT_EQ(report.smi_enables, 0x003Fu);
  EXPECT_EQ(text(report), "UHCI: legacy port 60h/64h traps and SMIs turned off (enables 0x003f)");
  EXPECT_EQ(model.config.value(0xC0), 0u) << "enables off, trap status cleared";
  EXPECT_EQ(model.config.value(0xC4), 0u) << "nothing else written";

  ControllerModel quiet(0x00, 0, false);
  quiet.config.set(0xC0, 0x2000, 0x5040, 0x8F00);  // interrupt routing only
  EXPECT_EQ(drivers::usb::hand_off(quiet, clock).outcome, Outcome::NoTraps);
  EXPECT_EQ(quiet.config.writes, 0);
}

// An OHCI controller whose interrupts the firmware routes to SMIs (HcControl.IR), running.
ControllerModel ohci_owned() {
  ControllerModel model(0x10, 0xFEBF2000, false);
  model.ohci = true;
  model.mmio_regs.set(kOhciControl, kOhciIr | kOhciOperational | 0x3);
  model.mmio_regs.set(kOhciInterruptEnable, 0x80000042);  // MIE, root hub status change, writeback done head
  return model;
}

TEST(UsbHandoff, OhciFirmwareReleasesOnAnOwnershipChangeRequest) {
  SimClock clock;
  ControllerModel model = ohci_owned();
  model.release_after_polls = 7;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.kind, ControllerKind::Ohci);
  EXPECT_EQ(report.outcome, Outcome::Released) << text(report);
  EXPECT_TRUE(model.ownership_change_requested);
  EXPECT_EQ(model.mmio_regs.value(kOhciInterruptEnable), 0u);
  EXPECT_EQ(model.mmio_regs.value(kOhciControl), 0u) << "reset: stopped, interrupts to the OS";
  EXPECT_TRUE(report.halted);
  EXPECT_EQ(text(report),
            "OHCI: handed off, the firmware released it after 0 ms; SMI enables 0x80000042 turned off; "
            "halted it (it was running)");
}

TEST(UsbHandoff, OhciFirmwareThatNeverReleases) {
  SimClock clock;
  ControllerModel model = ohci_owned();
  model.mmio_regs.set(kOhciControl, kOhciIr);  // suspended or reset, not running
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::Forced);
  EXPECT_GE(clock.ms(), drivers::usb::kReleaseTimeoutMs);
  EXPECT_EQ(model.mmio_regs.value(kOhciControl), 0u) << "interrupt routing taken back";
  EXPECT_EQ(model.mmio_regs.value(kOhciInterruptEnable), 0u);
  EXPECT_FALSE(report.was_running);
}

// QEMU's pci-ohci: InterruptRouting clear, nothing to ask for.
TEST(UsbHandoff, OhciNotOwned) {
  SimClock clock;
  ControllerModel model(0x10, 0xFEBF2000, false);
  model.ohci = true;
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.outcome, Outcome::NotOwned);
  EXPECT_FALSE(model.ownership_change_requested);
  EXPECT_LT(clock.ms(), 1u);
}

TEST(UsbHandoff, UnknownProgrammingInterfaceIsNamedButNotTouched) {
  SimClock clock;
  ControllerModel model(0xFE, 0xFEBF2000, false);  // a USB device (not a host controller)
  const Report report = drivers::usb::hand_off(model, clock);
  EXPECT_EQ(report.kind, ControllerKind::Other);
  EXPECT_EQ(report.outcome, Outcome::NotHandled);
  EXPECT_EQ(model.mmio_maps + model.config.writes, 0);
}

}  // namespace
}  // namespace ett::test
