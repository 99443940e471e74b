// ps2_stop_key.h: keyboard=1's stop check, inlined into the loop's stop check: a new key press ends the
// capture.
//
// Ps2Keyboard (ps2_keyboard.h) is the full polled driver; this is the capture loop's Keyboard, kept inline so
// that the loop has no call in it. Each check reads the 8042 status port and, when a byte waits, takes it out
// of the controller (a byte left there would hide the ones behind it): a mouse byte, a break code, or the
// release or repeat of the start key (Enter held on the start screen) does not stop the capture.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"
#include "drivers/input/stop_key_filter.h"

namespace ett::drivers {

class Ps2StopKey {
 public:
  explicit Ps2StopKey(StopKeyFilter filter) : m_filter(filter) {}

  [[gnu::always_inline]] bool new_key_press() {
    const uint8_t status = x86::in8(kStatusPort);
    if (!(status & kOutputFull)) return false;
    const uint8_t byte = x86::in8(kDataPort);
    return !(status & kFromAux) && m_filter.is_new_press(byte);
  }
  // Before the capture: reads whatever waits (keys from before the start) through the filter, so that a
  // release of the start key seen here is not waited for later.
  void drain() {
    for (int i = 0; i < kMaxDrain && take_byte(); ++i) {
    }
  }

 private:
  enum Port : uint16_t { kDataPort = 0x60, kStatusPort = 0x64 };
  enum StatusBit : uint8_t {
    kOutputFull = 1u << 0,
    kFromAux = 1u << 5,
  };
  static constexpr int kMaxDrain = 64;

  // Whether a byte was waiting; a keyboard byte goes through the filter, its verdict is dropped.
  bool take_byte() {
    const uint8_t status = x86::in8(kStatusPort);
    if (!(status & kOutputFull)) return false;
    const uint8_t byte = x86::in8(kDataPort);
    if (!(status & kFromAux)) m_filter.is_new_press(byte);
    return true;
  }

  StopKeyFilter m_filter;
};

}  // namespace ett::drivers
