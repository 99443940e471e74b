// qemu_exit.h: leaves QEMU through the isa-debug-exit device (exit status (value << 1) | 1).
#pragma once

#include <stdint.h>

namespace ett::drivers {

// Without an isa-debug-exit device the write goes nowhere, and the CPU halts instead.
[[noreturn]] void qemu_exit(uint8_t value);

}  // namespace ett::drivers
