// firmware_state_test.cpp: what the kernel does about the state the firmware leaves: the other processors
// are sent INIT (wait-for-SIPI) before the capture, and MSR_SMI_COUNT is read only on the CPU models that
// have it.
#include <regex>

#include "qemu_direct.h"

namespace ett::test {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// "EIP=xxxxxxxx" and "CS =ssss" of one CPU, from the monitor's `info registers`.
struct CpuRegisters {
  std::string eip;
  std::string cs;
};
CpuRegisters registers_of(QemuMachine& qemu, int cpu) {
  qemu.monitor("cpu " + std::to_string(cpu));
  const std::string dump = qemu.monitor("info registers");
  std::smatch eip, cs;
  std::regex_search(dump, eip, std::regex("EIP=([0-9a-f]{8})"));
  std::regex_search(dump, cs, std::regex("CS =([0-9a-f]{4})"));
  return {eip.empty() ? dump : eip[1].str(), cs.empty() ? dump : cs[1].str()};
}

// -smp 4: the kernel reads the four processors from the MADT and sends the three APs INIT. QEMU's TCG keeps
// an INIT sent to a halted CPU pending until something wakes it (x86_cpu_pending_interrupt does not count
// INIT), so the test wakes every CPU with an NMI from the monitor: an AP that was sent INIT then takes it
// first and sits in wait-for-SIPI at the reset vector (CS f000, EIP fff0); one that was not runs on in the
// firmware's code. The NMI also stops the kernel on the BSP (a panic that names it; without exit=qemu it
// halts and QEMU stays up to be asked).
TEST(FirmwareState, OtherCpusAreSentInitBeforeTheCapture) {
  ScratchDir dir;
  QemuMachine qemu(
      {.append = "dump=none auto=1 mode=hwlat limit=120", .monitor = true, .qemu_args = {"-smp", "4"}},
      dir / "");
  ASSERT_TRUE(qemu.wait_until([&] { return has(qemu.serial(), "ETT: capturing"); }, 90)) << qemu.serial();
  EXPECT_TRUE(has(qemu.serial(), "ETT: cpus: 4, 3 parked with INIT\n")) << qemu.serial();
  qemu.monitor("nmi");
  ASSERT_TRUE(qemu.wait_until([&] { return has(qemu.serial(), "ETT: halted"); }, 30)) << qemu.serial();
  for (int cpu = 1; cpu < 4; ++cpu) {
    const CpuRegisters ap = registers_of(qemu, cpu);
    EXPECT_EQ(ap.eip, "0000fff0") << "CPU " << cpu;
    EXPECT_EQ(ap.cs, "f000") << "CPU " << cpu;
  }
  EXPECT_NE(registers_of(qemu, 0).eip, "0000fff0") << "the BSP was not reset";
}

// One processor: nothing to park, and the line says so.
TEST(FirmwareState, OneCpuHasNothingToPark) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none mode=hwlat limit=0.1"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33) << qemu.serial();
  EXPECT_TRUE(has(qemu.serial(), "ETT: cpus: 1, 0 parked with INIT\n")) << qemu.serial();
}

// An Atom N270 (Bonnell, family 6 model 0x1C) has no MSR_SMI_COUNT although its model number is above
// Nehalem's 0x1A: the kernel does not read it (a real one raises #GP). `-hypervisor`: the CPUID bit that used
// to stop the read under QEMU is off, as on the real CPU.
TEST(FirmwareState, ABonnellAtomHasNoSmiCount) {
  ScratchDir dir;
  QemuMachine qemu(
      {.append = "exit=qemu dump=none mode=hwlat limit=0.1", .qemu_args = {"-cpu", "n270,-hypervisor"}},
      dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(
      has(serial, "ETT: SMI count: not available (no MSR_SMI_COUNT on GenuineIntel family 6 model 0x1c)\n"))
      << serial;
  EXPECT_TRUE(has(serial, "SMIs: not available")) << serial;
  EXPECT_FALSE(has(serial, "PANIC")) << serial;
}

// A Nehalem (model 0x1A) has it; QEMU counts the SMIs SeaBIOS took at boot.
TEST(FirmwareState, ANehalemReadsTheSmiCount) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none mode=hwlat limit=0.1", .qemu_args = {"-cpu", "Nehalem"}},
                   dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(std::regex_search(serial, std::regex("ETT: SMI count: [0-9]+ since reset\n"))) << serial;
  EXPECT_TRUE(std::regex_search(serial, std::regex("SMIs: [0-9]+\n"))) << serial;
}

}  // namespace
}  // namespace ett::test
