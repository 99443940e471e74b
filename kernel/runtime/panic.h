// panic.h: the kernel's last resort: report an impossible state on the console and stop (or leave QEMU).
#pragma once

namespace ett {

// Prints "ETT: PANIC <message>" and "ETT: RESULT FAILED panic: <message>", then leaves QEMU with
// vprobe::kExitFailure when exit=qemu was requested, else halts.
[[noreturn]] void panic(const char* message);

// Set once the command line is known: whether panic() (and any fatal error) leaves QEMU.
void set_panic_exits_qemu(bool exits_qemu);

}  // namespace ett
