// panic.cpp: prints the panic markers the boot tests look for, then halts or leaves QEMU.
#include "runtime/panic.h"

#include "arch/x86/cpu.h"
#include "drivers/console/console.h"
#include "drivers/qemu_exit.h"
#include "ett/virtual_probe.h"

namespace ett {

namespace {
bool g_exits_qemu = false;
bool g_in_panic = false;
}  // namespace

void set_panic_exits_qemu(bool exits_qemu) {
  g_exits_qemu = exits_qemu;
}

void panic(const char* message) {
  x86::cli();
  if (!g_in_panic) {  // a panic while printing a panic must not recurse
    g_in_panic = true;
    // Plain writes, no formatting: a panic from an exception handler must not run code that could fault
    // again.
    console::write("ETT: PANIC ");
    console::write(message);
    console::write("\nETT: RESULT FAILED panic: ");
    console::write(message);
    console::write("\n");
  }
  if (g_exits_qemu) drivers::qemu_exit(vprobe::kExitFailure);
  x86::halt_forever();
}

}  // namespace ett
