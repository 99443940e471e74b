// stop_key_filter.h: which keyboard bytes end a keyboard=1 capture: a new key press, never the release or the
// typematic repeat of the key that started it. No hardware: the host tests feed it byte sequences.
//
// Scancode set 1 (the controller's translation): make codes below 0x80, break codes with bit 7 set. Every
// other byte with bit 7 set is no key press either: the 0xE0/0xE1 prefixes and the keyboard's replies (0xFA
// acknowledge, 0xAA self-test passed, 0xFE resend, 0xFF overrun); 0x00 is the other overrun marker.
#pragma once

#include <stdint.h>

namespace ett::drivers {

class StopKeyFilter {
 public:
  static constexpr uint8_t kEnter = 0x1C;  // set 1 make code of Enter (keypad Enter: 0xE0 0x1C)

  // held_key: the make code of the key that started the capture and may still be down (Enter on the start
  // screen), 0 when none. Its repeats are ignored until its break code has been seen.
  constexpr explicit StopKeyFilter(uint8_t held_key = 0) : m_held(held_key) {}

  [[gnu::always_inline]] bool is_new_press(uint8_t byte) {
    if (byte & kBreakBit) {
      if (static_cast<uint8_t>(byte & ~kBreakBit) == m_held) m_held = 0;
      return false;
    }
    return byte != kOverrun && byte != m_held;
  }
  uint8_t held_key() const { return m_held; }

 private:
  static constexpr uint8_t kBreakBit = 0x80;
  static constexpr uint8_t kOverrun = 0x00;
  uint8_t m_held;
};

}  // namespace ett::drivers
