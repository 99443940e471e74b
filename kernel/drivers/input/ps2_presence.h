// ps2_presence.h: whether an 8042 keyboard controller answers at ports 0x60/0x64. UEFI-only PCs often have
// none (or only a firmware emulation that ends at ExitBootServices); the kernel then runs unattended.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"
#include "ett/result.h"

namespace ett::drivers {

class Ps2Presence {
 public:
  // Reads the controller's configuration byte (command 0x20) with a deadline of kTimeoutMs per step. Fails
  // with the reason when nothing answers: a status port that reads 0xFF (no device decodes it), an input
  // buffer that never empties, or no reply.
  static Status check(uint64_t tsc_hz);

  static constexpr uint32_t kTimeoutMs = 20;

 private:
  enum DataReg : uint8_t { kData = 0 };                        // port 0x60
  enum ControllerReg : uint8_t { kStatus = 0, kCommand = 0 };  // port 0x64
  enum StatusBit : uint8_t {
    kOutputFull = 1u << 0,
    kInputFull = 1u << 1,
  };
  enum Command : uint8_t { kReadConfiguration = 0x20 };
  static constexpr uint16_t kDataPort = 0x60;
  static constexpr uint16_t kControllerPort = 0x64;
  static constexpr uint8_t kFloatingBus = 0xFF;
  static constexpr uint32_t kMaxStaleBytes = 32;
};

}  // namespace ett::drivers
