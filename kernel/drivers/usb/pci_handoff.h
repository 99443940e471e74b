// pci_handoff.h: finds every USB host controller on the PCI buses and hands it over from the firmware's
// legacy support (drivers/usb/legacy_handoff.h), one line each on screen and serial.
#pragma once

#include <stdint.h>

namespace ett::drivers::usb {

struct HandoffSummary {
  uint32_t controllers;      // USB host controllers found
  uint32_t firmware_active;  // of which the firmware's legacy support was driving (owned or trapping)
};

// Needs the calibrated TSC rate for its deadlines.
HandoffSummary hand_off_all_controllers(uint64_t tsc_hz);

}  // namespace ett::drivers::usb
