// qemu_command.cpp: builds the QEMU argv of one machine (see qemu_command.h).
#include "harness/qemu_command.h"

#include <fmt/format.h>

#include "ett/virtual_probe.h"

namespace ett::host {

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

std::string uefi_vars_path(const std::string& shm_path) {
  return shm_path + ".ovmf-vars.fd";
}

std::string hold_pipe_path(const std::string& shm_path) {
  return shm_path + ".hold";
}

bool uses_guest_clock(const RunOptions& options) {
  if (!options.guest_clock || !options.run_command.empty()) return false;
  for (const std::string& word : split_words(options.append))
    if (word == "mode=calibrate" || word == "mode=hwlat") return false;
  return true;
}

namespace {

// -icount for a scenario on the guest's clock. shift=2: each instruction is 4 ns of guest time. The capture
// loop's poll (6 instructions) is then 24 ns and its stop check every 24.7 us of guest time; shift=0 or 1
// makes the TSC calibration at boot (port reads, few instructions each) take 10-25 s on a loaded 2-core
// host, a larger shift makes the poll coarser. sleep=off: the guest's clock never jumps ahead while the vCPU
// idles (the capture never halts).
// The hold pipe: a chardev that QEMU writes every byte of the debugcon to with "write all", so that the
// vCPU waits (and the guest's clock with it) while the pipe is full (see HoldPipe).
std::vector<std::string> clock_arguments(const RunOptions& options, const std::string& shm_path) {
  if (!uses_guest_clock(options)) return {};
  return {"-icount",  "shift=2,sleep=off",
          "-chardev", "pipe,id=etthold,path=" + hold_pipe_path(shm_path),
          "-device",  fmt::format("isa-debugcon,iobase={:#x},chardev=etthold", vprobe::kHoldWaitPort)};
}

}  // namespace

std::vector<std::string> qemu_command(const RunOptions& options, const std::string& kernel,
                                      const std::string& shm_path, const std::string& disk) {
  std::vector<std::string> argv = {
      options.qemu, "-M",   options.machine, "-accel", "tcg",     "-m",    std::to_string(options.memory_mb),
      "-display",   "none", "-monitor",      "none",   "-serial", "stdio", "-no-reboot"};
  // UEFI: OVMF is 64-bit firmware (the kernel runs the same on qemu-system-x86_64); no network card, for
  // which OVMF would start its PXE stack, seconds under TCG.
  if (options.firmware == Firmware::Uefi) {
    if (options.qemu == RunOptions{}.qemu) argv[0] = "qemu-system-x86_64";
    argv.insert(argv.end(),
                {"-drive", std::string("if=pflash,format=raw,readonly=on,file=") + kOvmfCode, "-drive",
                 "if=pflash,format=raw,file=" + uefi_vars_path(shm_path), "-nic", "none"});
  }
  argv.insert(argv.end(),
              {"-object", "memory-backend-file,id=shm0,mem-path=" + shm_path + ",size=1M,share=on", "-device",
               "ivshmem-plain,memdev=shm0"});
  // The first position of the interface: IDE primary master, AHCI port 0, the first NVMe controller (an ISO's
  // CD-ROM is IDE index 2 on pc and AHCI port 2 on q35).
  const std::vector<std::string> drive = disk_arguments(options.machine, {{disk, options.disk_interface, 0}});
  argv.insert(argv.end(), drive.begin(), drive.end());
  argv.insert(argv.end(), {"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"});
  for (std::string& argument : clock_arguments(options, shm_path)) argv.push_back(std::move(argument));
  if (!options.iso.empty()) {
    argv.insert(argv.end(), {"-cdrom", options.iso, "-boot", "d"});
  } else {
    std::string append = "exit=qemu";
    for (const std::string& word : split_words(options.append))
      if (word != "exit=qemu") append += " " + word;
    argv.insert(argv.end(), {"-kernel", kernel, "-append", append});
  }
  return argv;
}

}  // namespace ett::host
