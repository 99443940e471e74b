// qemu_exit.cpp: one write to the isa-debug-exit port.
#include "drivers/qemu_exit.h"

#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "ett/virtual_probe.h"

namespace ett::drivers {

void qemu_exit(uint8_t value) {
  x86::out8(vprobe::kDebugExitPort, value);
  x86::halt_forever();
}

}  // namespace ett::drivers
