// ps2_keyboard.h: the PS/2 keyboard, polled (no IRQs): whether a scancode is waiting, and reading one.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"

namespace ett::drivers {

class Ps2Keyboard {
 public:
  // The controller translates to scancode set 1 (BIOS default): make codes below 0x80, break codes with
  // bit 7 set, 0xE0 before the extended keys (PgUp, arrows, ...).
  bool key_pending() const;
  // One byte from the keyboard; 0 when none is waiting.
  uint8_t read_scancode() const;
  // Reads and drops whatever is waiting (keys pressed before the screen asked for one).
  void drain() const;

 private:
  enum DataReg : uint8_t { kData = 0 };          // port 0x60
  enum ControllerReg : uint8_t { kStatus = 0 };  // port 0x64
  enum StatusBit : uint8_t {
    kOutputFull = 1u << 0,
    kFromAux = 1u << 5,  // the byte is from the mouse port
  };
  static constexpr uint16_t kDataPort = 0x60;
  static constexpr uint16_t kControllerPort = 0x64;

  x86::IoWindow m_data{kDataPort};
  x86::IoWindow m_controller{kControllerPort};
};

}  // namespace ett::drivers
