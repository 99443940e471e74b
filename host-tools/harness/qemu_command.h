// qemu_command.h: the QEMU command line of one measurement PC of `ett qemu run`: machine, probe, disk, boot.
#pragma once

#include <string>
#include <vector>

#include "harness/runner.h"

namespace ett::host {

// The argv of one machine's QEMU: the machine profile from `options`, the virtual probe on `shm_path`, the
// trace disk `disk` on `options.disk_interface`, the isa-debug-exit port, and either the kernel (-kernel,
// with "exit=qemu" first in its command line) or the ISO. With Firmware::Uefi: qemu-system-x86_64 (OVMF is
// 64-bit firmware; the kernel runs the same) with OVMF as pflash.
std::vector<std::string> qemu_command(const RunOptions& options, const std::string& kernel,
                                      const std::string& shm_path, const std::string& disk);

// Debian's ovmf package: the UEFI firmware (read-only) and the variable store each machine gets a writable
// copy of, at uefi_vars_path() of its probe file.
inline constexpr const char* kOvmfCode = "/usr/share/OVMF/OVMF_CODE_4M.fd";
inline constexpr const char* kOvmfVars = "/usr/share/OVMF/OVMF_VARS_4M.fd";
std::string uefi_vars_path(const std::string& shm_path);

// On the guest's clock: the named pipe behind the machine's isa-debugcon (port vprobe::kHoldWaitPort) that
// the kernel writes to while it waits at the injector's hold (HoldPipe, injector.h), next to its probe file.
std::string hold_pipe_path(const std::string& shm_path);

// Whether a scenario plays on the guest's clock: options.guest_clock, unless --run (its program runs on host
// time) or --append mode=calibrate / mode=hwlat (they measure the emulator's own timing, which -icount would
// replace by instruction counts).
bool uses_guest_clock(const RunOptions& options);

// Words of a command line, split at spaces and tabs.
std::vector<std::string> split_words(const std::string& text);

}  // namespace ett::host
