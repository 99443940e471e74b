// keys.h: the keys the start screen and the analysis stage react to, decoded from PS/2 scancode set 1.
// No hardware: the host tests feed it byte sequences.
#pragma once

#include <stdint.h>

namespace ett::ui {

enum class Key : uint8_t { None, Enter, Escape, Save, Up, Down, PageUp, PageDown, Home, End };

// Set 1 make codes (the controller's translation, what a BIOS leaves on). An extended key is 0xE0 and then
// the same code as its keypad twin (PgUp = E0 49, keypad 9 = 49), so both map to the same key. Break codes
// (bit 7) and the rest are ignored.
class KeyDecoder {
 public:
  Key feed(uint8_t scancode) {
    if (scancode == kExtendedPrefix) return Key::None;  // the next byte is the key itself
    if (scancode & kBreakBit) return Key::None;
    switch (scancode) {
      case 0x1C:
        return Key::Enter;  // Enter, and keypad Enter after E0
      case 0x01:
        return Key::Escape;
      case 0x1F:
        return Key::Save;  // S
      case 0x48:
        return Key::Up;
      case 0x50:
        return Key::Down;
      case 0x49:
        return Key::PageUp;
      case 0x51:
        return Key::PageDown;
      case 0x47:
        return Key::Home;
      case 0x4F:
        return Key::End;
      default:
        return Key::None;
    }
  }

 private:
  static constexpr uint8_t kExtendedPrefix = 0xE0;
  static constexpr uint8_t kBreakBit = 0x80;
};

}  // namespace ett::ui
