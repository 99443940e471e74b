// qemu_command.h: the QEMU command line of one measurement PC of `ett qemu run`: machine, probe, disk, boot.
#pragma once

#include <string>
#include <vector>

#include "harness/runner.h"

namespace ett::host {

// The argv of one machine's QEMU: the machine profile from `options`, the virtual probe on `shm_path`, the
// trace disk `disk`, the isa-debug-exit port, and either the kernel (-kernel, with "exit=qemu" first in its
// command line) or the ISO.
std::vector<std::string> qemu_command(const RunOptions& options, const std::string& kernel,
                                      const std::string& shm_path, const std::string& disk);

// Whether a scenario plays on the guest's clock: options.guest_clock, unless --run (its program runs on host
// time) or --append mode=calibrate / mode=hwlat (they measure the emulator's own timing, which -icount would
// replace by instruction counts).
bool uses_guest_clock(const RunOptions& options);

// Words of a command line, split at spaces and tabs.
std::vector<std::string> split_words(const std::string& text);

}  // namespace ett::host
