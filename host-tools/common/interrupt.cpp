// interrupt.cpp: the signal that interrupted the run, and the exit it leads to.
#include "common/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "common/output_target.h"

namespace ett::host {

namespace {
std::atomic<int> g_signal{0};
}  // namespace

void note_interrupt(int signal) {
  g_signal.store(signal);
}

int interrupt_exit_status() {
  const int signal = g_signal.load();
  return 128 + (signal == 0 ? SIGINT : signal);
}

void exit_on_signal(int signal) {
  remove_pending_files();
  ::_exit(128 + signal);
}

}  // namespace ett::host
