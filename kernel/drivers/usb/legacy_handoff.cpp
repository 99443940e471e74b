// legacy_handoff.cpp: the BIOS-to-OS handoff of OHCI, EHCI and xHCI controllers and the UHCI trap switch-off.
#include "drivers/usb/legacy_handoff.h"

#include "arch/x86/pci.h"
#include "lib/format.h"
#include "lib/text.h"
#include "lib/tsc_math.h"

namespace ett::drivers::usb {

namespace {

namespace pci = x86::pci;

inline constexpr uint32_t kAllOnes = 0xFFFFFFFF;
inline constexpr uint64_t k4GiB = uint64_t{1} << 32;

enum ProgIf : uint8_t { kProgIfUhci = 0x00, kProgIfOhci = 0x10, kProgIfEhci = 0x20, kProgIfXhci = 0x30 };

// USBLEGSUP, the same layout in EHCI (configuration space) and xHCI (MMIO).
enum LegacySupport : uint32_t {
  kCapabilityIdMask = 0xFF,
  kNextShift = 8,
  kNextMask = 0xFF,
  kBiosOwned = 1u << 16,
  kOsOwned = 1u << 24,
};
inline constexpr uint32_t kLegacyCapabilityId = 1;
inline constexpr uint32_t kControlStatusOffset = 4;  // USBLEGCTLSTS follows USBLEGSUP
// The semaphores are bytes 2 (BIOS) and 3 (OS) of USBLEGSUP: a 16-bit write at offset+2 sets them alone.
inline constexpr uint8_t kSemaphoreBytes = 2;
inline constexpr uint16_t kSemaphoreBiosOwned = 1u << 0;
inline constexpr uint16_t kSemaphoreOsOwned = 1u << 8;
// USBLEGCTLSTS bits 29-31 (SMI on OS ownership change, on PCI command, on BAR) are write-1-to-clear.
inline constexpr uint32_t kSmiStatusWriteClear = 0x7u << 29;

// Where the first extended capability is named, in the capability registers at BAR0.
enum CapabilityRegister : uint32_t { kEhciHccParams = 0x08, kXhciHccParams1 = 0x10 };

// EHCI: HCCPARAMS.EECP (an offset in configuration space); USBLEGCTLSTS enables (USB SMI, error, port change,
// frame list rollover, host system error, async advance; OS ownership change, PCI command, BAR).
inline constexpr uint32_t kEhciEecpShift = 8;
inline constexpr uint8_t kEhciFirstExtendedOffset = 0x40;  // EECP is 0 (none) or past the PCI header
inline constexpr uint32_t kEhciSmiEnables = 0x3Fu | (0x7u << 13);

// xHCI: HCCPARAMS1.xECP (dwords from the BAR); USBLEGCTLSTS enables (USB SMI, host system error; OS
// ownership, PCI command, BAR). Its other low bits are reserved and kept as read.
inline constexpr uint32_t kXhciXecpShift = 16;
inline constexpr uint32_t kXhciSmiEnables = (1u << 0) | (1u << 4) | (0x7u << 13);
inline constexpr uint32_t kXhciControlReserved = (0x7u << 1) | (0xFFu << 5) | (0x7u << 17);
inline constexpr uint32_t kXhciMaxCapabilityOffset = 0x40000;  // xECP and every next pointer are < 256 KiB

// The operational registers (at CAPLENGTH, the low byte of capability register 0): USBCMD and USBSTS alike in
// EHCI and xHCI, their bits not. EHCI: USBCMD Run/Stop, USBSTS HCHalted (bit 12), USBINTR. xHCI: USBCMD
// Run/Stop, Interrupter Enable, Host System Error Enable; USBSTS HCHalted (bit 0). Both halt within 16 ms.
enum OperationalRegister : uint32_t { kUsbCommand = 0x00, kUsbStatus = 0x04, kEhciUsbInterrupts = 0x08 };
inline constexpr uint32_t kCapLengthMask = 0xFF;
inline constexpr uint32_t kRunStop = 1u << 0;
inline constexpr uint32_t kXhciCommandStops = kRunStop | (1u << 2) | (1u << 3);
inline constexpr uint32_t kEhciHalted = 1u << 12;
inline constexpr uint32_t kXhciHalted = 1u << 0;
inline constexpr uint32_t kHaltTimeoutMs = 16;

// OHCI (OpenHCI 1.0a section 5.1.1.3): ownership through HcControl.IR and HcCommandStatus.OCR in the
// registers.
enum OhciRegister : uint32_t {
  kOhciControl = 0x04,
  kOhciCommandStatus = 0x08,
  kOhciInterruptEnable = 0x10,
  kOhciInterruptDisable = 0x14,
};
inline constexpr uint32_t kOhciStateMask = 0x3u << 6;  // HostControllerFunctionalState
inline constexpr uint32_t kOhciOperational = 0x2u << 6;
inline constexpr uint32_t kOhciInterruptRouting = 1u << 8;
inline constexpr uint32_t kOhciRemoteWakeupConnected = 1u << 9;
inline constexpr uint32_t kOhciOwnershipChangeRequest = 1u << 3;

// UHCI: LEGSUP, 16 bits at 0xC0. Bits 0-3 trap port 60h/64h reads and writes, 4 is the SMI enable, 5 the A20
// pass-through, 7 SMI at end of pass-through; bits 8-11 and 15 are write-1-to-clear status. Bit 13 routes
// the interrupt to PIRQD: not legacy emulation, but turned off with the rest (this kernel polls).
inline constexpr uint8_t kUhciLegacySupport = 0xC0;
inline constexpr uint16_t kUhciEnables = 0x00BF;
inline constexpr uint16_t kUhciStatusWriteClear = 0x8F00;

inline constexpr uint32_t kMaxCapabilities = 64;
inline constexpr uint64_t kMinRegisterBytes =
    0x400;  // EHCI's register space; xHCI's is larger  // a loop guard: no controller lists this many

// The legacy support capability's offset, or (offset 0) why there is none: NoCapability, DeviceGone or
// BadCapability.
struct Found {
  Outcome problem;
  uint32_t offset;
};

Found find_ehci_capability(UsbFunction& function, uint8_t eecp) {
  uint32_t offset = eecp;
  for (uint32_t i = 0; i < kMaxCapabilities && offset != 0; ++i) {
    if (offset < kEhciFirstExtendedOffset || offset > 0xF8 || (offset & 3))
      return {Outcome::BadCapability, 0};
    const uint32_t capability = function.config_read32(static_cast<uint8_t>(offset));
    if (capability == kAllOnes) return {Outcome::DeviceGone, 0};
    if ((capability & kCapabilityIdMask) == kLegacyCapabilityId) return {Outcome::NoCapability, offset};
    offset = (capability >> kNextShift) & kNextMask;
  }
  return {offset == 0 ? Outcome::NoCapability : Outcome::BadCapability, 0};
}

Found find_xhci_capability(RegisterWindow& registers, uint64_t base, uint32_t xecp_dwords) {
  uint32_t offset = xecp_dwords * 4;
  for (uint32_t i = 0; i < kMaxCapabilities && offset != 0; ++i) {
    if (offset >= kXhciMaxCapabilityOffset || base + offset + 8 > k4GiB) return {Outcome::BadCapability, 0};
    const uint32_t capability = registers.read32(offset);
    if (capability == kAllOnes) return {Outcome::DeviceGone, 0};
    if ((capability & kCapabilityIdMask) == kLegacyCapabilityId) return {Outcome::NoCapability, offset};
    const uint32_t next = (capability >> kNextShift) & kNextMask;
    if (next == 0) return {Outcome::NoCapability, 0};
    offset += next * 4;
  }
  return {Outcome::BadCapability, 0};
}

// USBLEGSUP and USBLEGCTLSTS of EHCI (configuration space) or xHCI (MMIO), behind one face.
class LegacyRegisters {
 public:
  virtual uint32_t read(uint32_t offset) = 0;
  virtual void write_semaphores(uint32_t offset, uint16_t semaphores) = 0;
  virtual void write(uint32_t offset, uint32_t value) = 0;

 protected:
  ~LegacyRegisters() = default;
};

class ConfigLegacyRegisters final : public LegacyRegisters {
 public:
  explicit ConfigLegacyRegisters(UsbFunction& function) : m_function(function) {}
  uint32_t read(uint32_t offset) override { return m_function.config_read32(static_cast<uint8_t>(offset)); }
  void write_semaphores(uint32_t offset, uint16_t semaphores) override {
    m_function.config_write16(static_cast<uint8_t>(offset + kSemaphoreBytes), semaphores);
  }
  void write(uint32_t offset, uint32_t value) override {
    m_function.config_write32(static_cast<uint8_t>(offset), value);
  }

 private:
  UsbFunction& m_function;
};

// MMIO has only 32-bit access here: every bit but the two semaphores is written back as read (read-only or
// reserved-preserve).
class MmioLegacyRegisters final : public LegacyRegisters {
 public:
  explicit MmioLegacyRegisters(RegisterWindow& registers) : m_registers(registers) {}
  uint32_t read(uint32_t offset) override { return m_registers.read32(offset); }
  void write_semaphores(uint32_t offset, uint16_t semaphores) override {
    constexpr uint32_t kSemaphores = kBiosOwned | kOsOwned;
    const uint32_t others = m_registers.read32(offset) & ~kSemaphores;
    m_registers.write32(offset, others | ((uint32_t{semaphores} << 16) & kSemaphores));
  }
  void write(uint32_t offset, uint32_t value) override { m_registers.write32(offset, value); }

 private:
  RegisterWindow& m_registers;
};

// Sets the OS-owned semaphore and waits for the firmware to drop its own; clears the firmware's when it does
// not. `report.outcome` is Released, NotOwned, Forced or DeviceGone.
void take_ownership(LegacyRegisters& registers, uint32_t offset, Clock& clock, Report& report) {
  const uint32_t legsup = registers.read(offset);
  if (legsup == kAllOnes) {
    report.outcome = Outcome::DeviceGone;
    return;
  }
  if (!(legsup & kBiosOwned)) {
    registers.write_semaphores(offset, kSemaphoreOsOwned);
    report.outcome = Outcome::NotOwned;
    return;
  }
  // The firmware's semaphore is written back as read (set): only the OS-owned bit changes, which is the SMI
  // that asks the firmware to let go.
  registers.write_semaphores(offset, kSemaphoreOsOwned | kSemaphoreBiosOwned);
  const uint64_t start = clock.now();
  uint32_t last = legsup;
  const Status released =
      storage::wait_until(clock, kReleaseTimeoutMs, "the firmware kept the controller", [&] {
        last = registers.read(offset);
        return last == kAllOnes || !(last & kBiosOwned);
      });
  if (last == kAllOnes) {
    report.outcome = Outcome::DeviceGone;
    return;
  }
  report.waited_ms = static_cast<uint32_t>(lib::us_for_ticks(clock.now() - start, clock.hz()) / 1000);
  if (released) {
    report.outcome = Outcome::Released;
    return;
  }
  registers.write_semaphores(offset, kSemaphoreOsOwned);
  report.outcome = Outcome::Forced;
}

// Turns the SMI enables of USBLEGCTLSTS off and clears its write-1-to-clear SMI status bits; `keep` are the
// reserved bits written back as read.
void disable_smis(LegacyRegisters& registers, uint32_t offset, uint32_t enables, uint32_t keep,
                  Report& report) {
  const uint32_t control = registers.read(offset + kControlStatusOffset);
  if (control == kAllOnes) return;
  report.smi_enables = control & enables;
  registers.write(offset + kControlStatusOffset, (control & keep) | kSmiStatusWriteClear);
  report.smi_enables_now = registers.read(offset + kControlStatusOffset) & enables;
}

// Reads BAR0 into `report.bar` (without sizing it: writing a BAR can itself be an SMI trigger); false, with
// the outcome set, when this kernel cannot use it.
bool find_registers(UsbFunction& function, Report& report) {
  const uint32_t command = function.config_read32(pci::kCommand) & 0xFFFF;
  const uint32_t low = function.config_read32(pci::kBar0);
  const bool is_64bit = (low & pci::kBarTypeMask) == pci::kBarType64;
  const uint32_t high = is_64bit ? function.config_read32(pci::kBar0 + 4) : 0;
  const pci::Bar bar = pci::decode_bar({low, high, kAllOnes, kAllOnes});
  report.bar = bar.address;
  if (bar.is_io || bar.address == 0 || !(command & pci::kMemorySpace)) {
    report.outcome = Outcome::NotDecoding;
    return false;
  }
  if (bar.address + kMinRegisterBytes > k4GiB) {
    report.outcome = Outcome::BarAbove4GiB;
    return false;
  }
  return true;
}

// A controller the firmware left running keeps reading its schedules from memory during the capture: stop it.
void halt(RegisterWindow& registers, bool ehci, Clock& clock, Report& report) {
  const uint32_t operational = registers.read32(0) & kCapLengthMask;
  const uint32_t halted = ehci ? kEhciHalted : kXhciHalted;
  const uint32_t status = registers.read32(operational + kUsbStatus);
  if (status == kAllOnes || (status & halted)) return;
  report.was_running = true;
  if (ehci) registers.write32(operational + kEhciUsbInterrupts, 0);
  const uint32_t command = registers.read32(operational + kUsbCommand);
  registers.write32(operational + kUsbCommand, command & ~(ehci ? kRunStop : kXhciCommandStops));
  report.halted = storage::wait_until(clock, kHaltTimeoutMs, "the controller did not halt", [&] {
                    return (registers.read32(operational + kUsbStatus) & halted) != 0;
                  }).ok();
}

// EHCI and xHCI alike: find the capability, take the controller, turn its SMIs off.
void hand_off_capability(UsbFunction& function, Clock& clock, Report& report) {
  const bool ehci = report.kind == ControllerKind::Ehci;
  RegisterWindow& registers = function.mmio(static_cast<uint32_t>(report.bar));
  const uint32_t params = registers.read32(ehci ? kEhciHccParams : kXhciHccParams1);
  if (params == kAllOnes) {
    report.outcome = Outcome::DeviceGone;
    return;
  }
  const Found found = ehci ? find_ehci_capability(function, static_cast<uint8_t>(params >> kEhciEecpShift))
                           : find_xhci_capability(registers, report.bar, params >> kXhciXecpShift);
  if (found.offset == 0) {
    report.outcome = found.problem;
    if (found.problem == Outcome::NoCapability) halt(registers, ehci, clock, report);
    return;
  }
  report.capability = found.offset;
  ConfigLegacyRegisters in_config(function);
  MmioLegacyRegisters in_mmio(registers);
  LegacyRegisters& legacy = ehci ? static_cast<LegacyRegisters&>(in_config) : in_mmio;
  take_ownership(legacy, found.offset, clock, report);
  if (report.outcome == Outcome::DeviceGone) return;
  disable_smis(legacy, found.offset, ehci ? kEhciSmiEnables : kXhciSmiEnables,
               ehci ? 0 : kXhciControlReserved, report);
  halt(registers, ehci, clock, report);
}

// OHCI: HcControl.InterruptRouting set means the firmware gets the controller's interrupts as SMIs. An
// ownership change request (HcCommandStatus.OCR) asks it to clear the bit; if it does not, the kernel clears
// it itself. Then every interrupt is disabled and a running controller is put into reset, which stops it.
void hand_off_ohci(RegisterWindow& registers, Clock& clock, Report& report) {
  const uint32_t control = registers.read32(kOhciControl);
  if (control == kAllOnes) {
    report.outcome = Outcome::DeviceGone;
    return;
  }
  report.outcome = Outcome::NotOwned;
  if (control & kOhciInterruptRouting) {
    registers.write32(kOhciCommandStatus, kOhciOwnershipChangeRequest);
    const uint64_t start = clock.now();
    const Status released =
        storage::wait_until(clock, kReleaseTimeoutMs, "the firmware kept the controller",
                            [&] { return !(registers.read32(kOhciControl) & kOhciInterruptRouting); });
    report.waited_ms = static_cast<uint32_t>(lib::us_for_ticks(clock.now() - start, clock.hz()) / 1000);
    report.outcome = released ? Outcome::Released : Outcome::Forced;
  }
  const uint32_t enabled = registers.read32(kOhciInterruptEnable);
  if (control & kOhciInterruptRouting) report.smi_enables = enabled;  // the interrupts that were SMIs
  registers.write32(kOhciInterruptDisable, kAllOnes);
  report.smi_enables_now = registers.read32(kOhciInterruptEnable) & report.smi_enables;
  const uint32_t now = registers.read32(kOhciControl);
  if ((now & kOhciStateMask) == kOhciOperational) {
    report.was_running = true;
    registers.write32(kOhciControl, now & kOhciRemoteWakeupConnected);  // state USBRESET, routing to the OS
    report.halted = (registers.read32(kOhciControl) & (kOhciStateMask | kOhciInterruptRouting)) == 0;
  } else if (now & kOhciInterruptRouting) {
    registers.write32(kOhciControl, now & ~kOhciInterruptRouting);
  }
}

void clear_uhci_traps(UsbFunction& function, Report& report) {
  report.capability = kUhciLegacySupport;
  const uint16_t legsup = static_cast<uint16_t>(function.config_read32(kUhciLegacySupport));
  report.smi_enables = legsup & kUhciEnables;
  if (report.smi_enables == 0) {
    report.outcome = Outcome::NoTraps;
    return;
  }
  function.config_write16(kUhciLegacySupport, kUhciStatusWriteClear);
  report.smi_enables_now = function.config_read32(kUhciLegacySupport) & kUhciEnables;
  report.outcome = Outcome::TrapsCleared;
}

}  // namespace

ControllerKind classify(uint8_t prog_if) {
  switch (prog_if) {
    case kProgIfUhci:
      return ControllerKind::Uhci;
    case kProgIfOhci:
      return ControllerKind::Ohci;
    case kProgIfEhci:
      return ControllerKind::Ehci;
    case kProgIfXhci:
      return ControllerKind::Xhci;
    default:
      return ControllerKind::Other;
  }
}

const char* kind_name(ControllerKind kind) {
  switch (kind) {
    case ControllerKind::Uhci:
      return "UHCI";
    case ControllerKind::Ohci:
      return "OHCI";
    case ControllerKind::Ehci:
      return "EHCI";
    case ControllerKind::Xhci:
      return "xHCI";
    case ControllerKind::Other:
      break;
  }
  return "USB controller";
}

Report hand_off(UsbFunction& function, Clock& clock) {
  Report report{};
  report.kind = ControllerKind::Other;
  const uint32_t id = function.config_read32(pci::kVendorId);
  const uint32_t class_dword = function.config_read32(0x08);  // revision, prog-if, subclass, class
  if (id == kAllOnes || class_dword == kAllOnes) {
    report.outcome = Outcome::DeviceGone;
    return report;
  }
  report.kind = classify(static_cast<uint8_t>(class_dword >> 8));
  switch (report.kind) {
    case ControllerKind::Uhci:
      clear_uhci_traps(function, report);
      return report;
    case ControllerKind::Ehci:
    case ControllerKind::Xhci:
    case ControllerKind::Ohci:
      break;
    case ControllerKind::Other:
      report.outcome = Outcome::NotHandled;
      return report;
  }
  if (!find_registers(function, report)) return report;
  if (report.kind == ControllerKind::Ohci)
    hand_off_ohci(function.mmio(static_cast<uint32_t>(report.bar)), clock, report);
  else
    hand_off_capability(function, clock, report);
  return report;
}

size_t describe(const Report& report, char* out, size_t capacity) {
  const char* name = kind_name(report.kind);
  char smis[128] = "";
  if (report.smi_enables_now != 0)
    lib::format(smis, sizeof(smis), "; SMI enables 0x%04x, still on: 0x%04x", report.smi_enables,
                report.smi_enables_now);
  else if (report.smi_enables != 0)
    lib::format(smis, sizeof(smis), "; SMI enables 0x%04x turned off", report.smi_enables);
  if (report.was_running) {
    const size_t used = lib::text_length(smis);
    if (report.halted)
      lib::format(smis + used, sizeof(smis) - used, "; halted it (it was running)");
    else
      lib::format(smis + used, sizeof(smis) - used, "; it did not halt within %u ms", kHaltTimeoutMs);
  }
  switch (report.outcome) {
    case Outcome::Released:
      return lib::format(out, capacity, "%s: handed off, the firmware released it after %u ms%s", name,
                         report.waited_ms, smis);
    case Outcome::NotOwned:
      return lib::format(out, capacity, "%s: handed off, the firmware did not own it%s", name, smis);
    case Outcome::Forced:
      return lib::format(out, capacity, "%s: the firmware did not release it within %u ms: taken by force%s",
                         name, kReleaseTimeoutMs, smis);
    case Outcome::TrapsCleared:
      return lib::format(out, capacity,
                         "%s: legacy port 60h/64h traps and SMIs turned off (enables 0x%04x%s)", name,
                         report.smi_enables, report.smi_enables_now ? ", some still on" : "");
    case Outcome::NoTraps:
      return lib::format(out, capacity, "%s: no legacy trap or SMI enabled", name);
    case Outcome::NoCapability:
      return lib::format(out, capacity, "%s: no USB legacy support capability, nothing to hand off%s", name,
                         smis);
    case Outcome::BarAbove4GiB:
      return lib::format(out, capacity,
                         "%s: registers at 0x%llx lie above 4 GiB: skipped (this 32-bit kernel runs with "
                         "paging off), its legacy SMIs stay",
                         name, static_cast<unsigned long long>(report.bar));
    case Outcome::NotDecoding:
      return lib::format(out, capacity, "%s: memory decoding off (the firmware does not use it): skipped",
                         name);
    case Outcome::DeviceGone:
      return lib::format(out, capacity, "%s: reads all-ones (device gone): skipped", name);
    case Outcome::BadCapability:
      return lib::format(out, capacity, "%s: its extended capability list is broken: skipped", name);
    case Outcome::NotHandled:
      break;
  }
  return lib::format(out, capacity, "%s: not handled, its legacy SMIs (if any) stay", name);
}

}  // namespace ett::drivers::usb
