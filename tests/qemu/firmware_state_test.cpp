// firmware_state_test.cpp: what the kernel does about the state the firmware leaves: the other processors
// are sent INIT (wait-for-SIPI) before the capture, and MSR_SMI_COUNT is read only on the CPU models that
// have it.
#include <regex>
#include <string>
#include <vector>

#include "qemu_direct.h"

namespace ett::test {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The INIT IPIs the guest wrote to its local APIC's ICR, from QEMU's own trace of APIC register writes
// (`-trace apic_mem_writel`: "apic_mem_writel 0x310 = 0x02000000" is the destination, "0x300 = 0x0000c500"
// the command): the APIC IDs each INIT assert (0xc500) and deassert (0x8500) went to, in order.
std::vector<std::string> init_ipis(const std::string& trace) {
  std::vector<std::string> sent;
  std::string destination = "?";
  const std::regex write("apic_mem_writel 0x(3[01]0) = 0x([0-9a-f]{8})");
  for (std::sregex_iterator it(trace.begin(), trace.end(), write), end; it != end; ++it) {
    const std::string reg = (*it)[1], value = (*it)[2];
    if (reg == "310") destination = value.substr(0, 2);
    if (reg == "300" && (value == "0000c500" || value == "00008500"))
      sent.push_back((value == "0000c500" ? "assert " : "deassert ") + destination);
  }
  return sent;
}

// -smp 4: the kernel reads the four processors from the MADT and sends each AP (APIC IDs 1-3, not the BSP's
// 0) INIT assert and deassert through the xAPIC's ICR, each delivered (the ICR's delivery status cleared)
// before the next. QEMU records the ICR writes; its TCG keeps an INIT sent to a halted vCPU pending until
// something else wakes it (x86_cpu_pending_interrupt does not count INIT, and SeaBIOS leaves the APs halted
// with LINT1 masked), so `info registers` cannot show the APs at the reset vector: the trace is the evidence,
// and `info cpus` still lists all four.
TEST(FirmwareState, OtherCpusAreSentInitBeforeTheCapture) {
  ScratchDir dir;
  const fs::path trace = dir / "apic-trace.log";
  QemuMachine qemu({.append = "exit=qemu dump=none mode=hwlat limit=0.1",
                    .monitor = true,
                    .qemu_args = {"-smp", "4", "-trace", "apic_mem_writel", "-D", trace.string()}},
                   dir / "");
  ASSERT_TRUE(qemu.wait_until([&] { return has(qemu.serial(), "ETT: capturing"); }, 90)) << qemu.serial();
  const std::string cpus = qemu.monitor("info cpus");
  for (int cpu = 0; cpu < 4; ++cpu) EXPECT_TRUE(has(cpus, "CPU #" + std::to_string(cpu))) << cpus;
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(has(serial, "ETT: cpus: 4, 3 parked with INIT\n")) << serial;
  // Parked before the capture started.
  EXPECT_LT(serial.find("ETT: cpus:"), serial.find("ETT: capturing")) << serial;
  const std::vector<std::string> expected = {"assert 01",   "deassert 01", "assert 02",
                                             "deassert 02", "assert 03",   "deassert 03"};
  EXPECT_EQ(init_ipis(slurp(trace)), expected) << slurp(trace);
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

// Under UEFI (OVMF, q35, four CPUs) with a network card: OVMF's drivers leave devices bus-mastering after
// ExitBootServices (the e1000 among them); the kernel turns it off on those it does not use for the capture,
// and OVMF's parked APs are sent INIT like SeaBIOS's.
TEST(FirmwareState, UefiLeavesBusMastersTheKernelStops) {
  ScratchDir dir;
  const fs::path d = dir / "";
  QemuMachine qemu(
      {.iso = make_test_iso(d, "probe=ivshmem dump=none mode=hwlat limit=0.1 exit=qemu").string(),
       .qemu_args = {"-smp", "4", "-nic", "user,model=e1000"},
       .uefi = true,
       .machine = "q35"},
      d);
  auto exit = qemu.wait_exit(180);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(has(serial, "ETT: cpus: 4, 3 parked with INIT\n")) << serial;
  std::smatch stopped;
  ASSERT_TRUE(
      std::regex_search(serial, stopped,
                        std::regex("ETT: bus mastering off on ([0-9]+) PCI devices the kernel does not "
                                   "use, until the capture ends\n")))
      << serial;
  EXPECT_GE(std::stoi(stopped[1]), 1) << serial;
  EXPECT_LT(serial.find("ETT: bus mastering off"), serial.find("ETT: captured")) << serial;
}

}  // namespace
}  // namespace ett::test
