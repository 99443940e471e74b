// legacy_handoff.h: takes USB host controllers from the firmware's legacy support (the "Legacy USB" setup
// option: SMM code that drives a USB keyboard and traps ports 0x60/0x64 to emulate an 8042) so that its SMIs
// stop. EHCI: USBLEGSUP/USBLEGCTLSTS in PCI configuration space, found through HCCPARAMS.EECP (EHCI 1.0
// section 2.1.7 and appendix C). xHCI: the USB Legacy Support Capability among the MMIO extended capabilities
// (HCCPARAMS1.xECP, xHCI section 7.1). OHCI: HcControl.InterruptRouting and the ownership change request.
// UHCI: the trap and SMI enables of LEGSUP at configuration offset 0xC0.
// The driver reaches the controller only through the interfaces below, so the host tests run it against
// register models.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "drivers/storage/hardware.h"

namespace ett::drivers::usb {

using storage::Clock;
using storage::RegisterWindow;

// PCI class 0x0C (serial bus), subclass 0x03 (USB); the programming interface names the controller.
inline constexpr uint8_t kClassSerialBus = 0x0C;
inline constexpr uint8_t kSubclassUsb = 0x03;
enum class ControllerKind : uint8_t { Uhci, Ohci, Ehci, Xhci, Other };
ControllerKind classify(uint8_t prog_if);
const char* kind_name(ControllerKind kind);

// One controller's PCI configuration space, and its registers at a physical address (the kernel maps them
// one to one: paging is off).
class UsbFunction {
 public:
  virtual uint32_t config_read32(uint8_t offset) = 0;
  // Writes bytes offset and offset+1 only: the semaphore bytes of USBLEGSUP without its read-only half.
  virtual void config_write16(uint8_t offset, uint16_t value) = 0;
  virtual void config_write32(uint8_t offset, uint32_t value) = 0;
  virtual RegisterWindow& mmio(uint32_t base) = 0;

 protected:
  ~UsbFunction() = default;
};

// How long the firmware gets to release a controller once the OS-owned semaphore is set (Linux waits as
// long).
inline constexpr uint32_t kReleaseTimeoutMs = 1000;

enum class Outcome : uint8_t {
  Released,       // the firmware owned it and released it within kReleaseTimeoutMs
  NotOwned,       // the firmware did not own it: taken at once
  Forced,         // the firmware did not release it: its semaphore was cleared and its SMIs turned off anyway
  TrapsCleared,   // UHCI: the port 60h/64h traps and SMI enables were on and are now off
  NoTraps,        // UHCI: no trap or SMI enable was on
  NoCapability,   // no legacy support capability: nothing to hand off
  BarAbove4GiB,   // the registers lie above 4 GiB: this 32-bit kernel without paging cannot reach them
  NotDecoding,    // memory decoding off or no memory BAR: the firmware does not use the controller
  DeviceGone,     // configuration space or registers read all-ones
  BadCapability,  // the capability list points outside its space or loops
  NotHandled,     // an unknown programming interface: left as it is
};

struct Report {
  ControllerKind kind;
  Outcome outcome;
  uint64_t bar;              // the registers' address (EHCI, xHCI)
  uint32_t capability;       // offset of USBLEGSUP (config space for EHCI, MMIO for xHCI, 0xC0 for UHCI)
  uint32_t waited_ms;        // Released: how long the firmware took
  uint32_t smi_enables;      // the SMI (and UHCI trap) enables found on
  uint32_t smi_enables_now;  // the same bits read back afterwards (0 when they turned off)
  bool was_running;          // OHCI, EHCI, xHCI: the controller was running after the handoff
  bool halted;               // and stopped when told to
};

// Hands one controller over to this kernel and turns its legacy SMIs off. Never fails: the outcome says what
// was done. Reads the registers only when the programming interface is OHCI, EHCI or xHCI.
Report hand_off(UsbFunction& function, Clock& clock);

// The line the kernel prints for a report ("EHCI: the firmware released it after 12 ms, SMI enables 0x0001
// turned off"), without the controller's address.
size_t describe(const Report& report, char* out, size_t capacity);

// Whether the firmware's legacy support was driving this controller: a USB keyboard it emulated as an 8042
// no longer reaches this kernel.
constexpr bool firmware_was_active(const Report& report) {
  return report.outcome == Outcome::Released || report.outcome == Outcome::Forced ||
         report.outcome == Outcome::TrapsCleared || report.smi_enables != 0;
}

}  // namespace ett::drivers::usb
