// ps2_stop_key.h: keyboard=1's stop check: one read of the 8042 status port, inlined into the loop's stop check.
//
// Ps2Keyboard (ps2_keyboard.h) is the full polled driver; this is the capture loop's Keyboard, kept inline so
// that the loop has no call in it. A pending mouse byte does not count as a key.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"

namespace ett::drivers {

struct Ps2StopKey {
  enum Port : uint16_t { kStatusPort = 0x64 };
  enum StatusBit : uint8_t {
    kOutputFull = 1u << 0,
    kFromAux = 1u << 5,
  };
  [[gnu::always_inline]] bool key_pending() const {
    return (x86::in8(kStatusPort) & (kOutputFull | kFromAux)) == kOutputFull;
  }
};

}  // namespace ett::drivers
