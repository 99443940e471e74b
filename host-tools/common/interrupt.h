// interrupt.h: which signal ended or interrupted the run (SIGINT or SIGTERM), for its exit status 128 + N.
#pragma once

namespace ett::host {

// Async-signal-safe: a signal handler or the thread that took the signal records it.
void note_interrupt(int signal);
// 130 after SIGINT (also when nothing was recorded), 143 after SIGTERM.
int interrupt_exit_status();
// Ends the process as a signal ending the run does: the temporary output files removed, exit 128 + signal.
[[noreturn]] void exit_on_signal(int signal);

}  // namespace ett::host
