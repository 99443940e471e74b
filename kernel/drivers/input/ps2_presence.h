// ps2_presence.h: whether a keyboard answers at the 8042 (ports 0x60/0x64). UEFI-only PCs often have no
// controller (or only a firmware emulation that ends at ExitBootServices), and a PC with a controller may
// have no keyboard plugged in; either way nobody can press Enter, and the kernel runs unattended.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/io_ports.h"

namespace ett::drivers {

class Ps2Presence {
 public:
  // The deadlines' time source: the TSC in the kernel, a model's counter in the host tests.
  class Clock {
   public:
    virtual uint64_t now() = 0;

   protected:
    ~Clock() = default;
  };

  // The kernel's check: real ports, the TSC at tsc_hz.
  static Status check(uint64_t tsc_hz);
  // Two steps, every wait against a deadline. The controller: reads its configuration byte (command 0x20),
  // kControllerTimeoutMs per step; fails when the status port reads 0xFF (no device decodes it), the input
  // buffer never empties, or no reply comes. The keyboard behind it: sends the keyboard an echo (0xEE) and
  // waits kKeyboardTimeoutMs for its reply, up to kEchoAttempts times (again after a resend request, 0xFE);
  // fails when no keyboard byte comes or the controller reports its timeout (no device on the keyboard
  // port). A key pressed meanwhile answers as well: a keyboard is there.
  static Status check(lib::IoPorts& io, Clock& clock, uint64_t ticks_per_ms);

  static constexpr uint32_t kControllerTimeoutMs = 20;
  static constexpr uint32_t kKeyboardTimeoutMs = 100;
  static constexpr uint32_t kEchoAttempts = 2;

 private:
  enum DataReg : uint8_t { kData = 0 };                        // port 0x60
  enum ControllerReg : uint8_t { kStatus = 0, kCommand = 0 };  // port 0x64
  enum StatusBit : uint8_t {
    kOutputFull = 1u << 0,
    kInputFull = 1u << 1,
    kFromAux = 1u << 5,  // the byte is from the mouse port
    kTimeout = 1u << 6,  // the device did not answer (PS/2 controllers: on receive or transmit)
    kParityError = 1u << 7,
  };
  enum Command : uint8_t { kReadConfiguration = 0x20 };
  enum KeyboardByte : uint8_t {
    kEcho = 0xEE,    // the command, and a keyboard's reply to it
    kResend = 0xFE,  // the keyboard asks for the command again; controllers also return it when none answers
    kError = 0xFF,
  };
  static constexpr uint16_t kDataPort = 0x60;
  static constexpr uint16_t kControllerPort = 0x64;
  static constexpr uint8_t kFloatingBus = 0xFF;
  static constexpr uint32_t kMaxStaleBytes = 32;
};

}  // namespace ett::drivers
