// qemu_command_test.cpp: the QEMU command line of `ett qemu run` (host-tools/harness/qemu_command) for each
// firmware: SeaBIOS as before, OVMF with its code read-only, the machine's own variable store and no NIC.
#include "harness/qemu_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ett::host {
namespace {

bool has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST(QemuCommand, BiosBootsTheIsoWithQemusOwnFirmware) {
  RunOptions options;
  options.iso = "ett.iso";
  const auto argv = qemu_command(options, "", "/dev/shm/probe", "trace.img");
  EXPECT_EQ(argv[0], "qemu-system-i386");
  EXPECT_FALSE(has(argv, "if=pflash,format=raw,readonly=on,file=" + std::string(kOvmfCode)));
  EXPECT_TRUE(has(argv, "-cdrom"));
  EXPECT_TRUE(has(argv, "file=trace.img,format=raw,if=ide,index=0"));
}

TEST(QemuCommand, UefiUsesOvmfAndTheMachinesOwnVariableStore) {
  RunOptions options;
  options.iso = "ett.iso";
  options.firmware = Firmware::Uefi;
  const auto argv = qemu_command(options, "", "/dev/shm/probe", "trace.img");
  EXPECT_EQ(argv[0], "qemu-system-x86_64");  // OVMF is 64-bit firmware
  EXPECT_TRUE(has(argv, "if=pflash,format=raw,readonly=on,file=" + std::string(kOvmfCode)));
  EXPECT_TRUE(has(argv, "if=pflash,format=raw,file=" + uefi_vars_path("/dev/shm/probe")));
  EXPECT_NE(uefi_vars_path("/dev/shm/a"), uefi_vars_path("/dev/shm/b"));
  const auto nic = std::find(argv.begin(), argv.end(), "-nic");
  ASSERT_NE(nic, argv.end());
  EXPECT_EQ(*(nic + 1), "none");
  EXPECT_TRUE(has(argv, "pc"));  // the trace disk stays on legacy IDE
  EXPECT_TRUE(has(argv, "file=trace.img,format=raw,if=ide,index=0"));
  EXPECT_TRUE(has(argv, "-cdrom"));

  options.qemu = "/opt/qemu/bin/qemu-system-x86_64";  // a binary the user chose is kept
  EXPECT_EQ(qemu_command(options, "", "/dev/shm/probe", "trace.img")[0], options.qemu);
}

// On the guest's clock: -icount, and the debugcon the kernel's wait at the injector's hold writes to, on the
// machine's own hold pipe (not on the firmwares' debug port). On the host's clock, or for --run, neither.
TEST(QemuCommand, GuestClockGetsIcountAndTheHoldPipe) {
  RunOptions options;
  options.guest_clock = true;
  const auto argv = qemu_command(options, "kernel.elf", "/dev/shm/probe", "trace.img");
  EXPECT_TRUE(has(argv, "-icount"));
  EXPECT_TRUE(has(argv, "pipe,id=etthold,path=" + hold_pipe_path("/dev/shm/probe")));
  EXPECT_TRUE(has(argv, "isa-debugcon,iobase=0x4e9,chardev=etthold"));
  EXPECT_NE(hold_pipe_path("/dev/shm/a"), hold_pipe_path("/dev/shm/b"));
  options.guest_clock = false;
  const auto host = qemu_command(options, "kernel.elf", "/dev/shm/probe", "trace.img");
  EXPECT_FALSE(has(host, "-icount"));
  EXPECT_FALSE(has(host, "-chardev"));
  options.guest_clock = true;
  options.run_command = "true";
  EXPECT_FALSE(has(qemu_command(options, "kernel.elf", "/dev/shm/probe", "trace.img"), "-chardev"));
}

}  // namespace
}  // namespace ett::host
