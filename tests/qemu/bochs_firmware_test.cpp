// bochs_firmware_test.cpp: the kernel on Bochs, a PC emulator written apart from QEMU (Debian's bochs 2.7,
// its term display under a pseudo-terminal, booting the test ISO). Two things QEMU 7.2's TCG cannot show: an
// RDMSR of an MSR the CPU model does not implement raises #GP there (QEMU returns 0), so the fault-safe read
// of MSR_SMI_COUNT is exercised; and its Ice Lake and Skylake-X models report CPUID leaves 0x15/0x16.
#include "bochs_machine.h"

namespace ett::test {
namespace {

// Boots the test ISO (GRUB, multiboot2) on Bochs with `cpu_model` until the kernel's RESULT line or
// `seconds`; returns the serial log. Bochs runs with `clock: sync=none` (guest time is instruction count).
std::string boot_on_bochs(const fs::path& dir, const std::string& cpu_model, double seconds) {
  const fs::path iso = make_test_iso(dir, "dump=none mode=hwlat limit=0.1 auto=1");
  BochsMachine bochs(dir, {.iso = iso, .cpu = "model=" + cpu_model + ", ips=200000000, ignore_bad_msrs=0"});
  bochs.wait_serial("ETT: RESULT", seconds);
  bochs.stop();
  return bochs.serial();
}

// A Sandy Bridge (family 6 model 0x2A) is on the MSR_SMI_COUNT list, but Bochs does not implement the MSR and
// raises #GP: the kernel reports it instead of panicking on the fault.
TEST(BochsFirmware, AnRdmsrThatFaultsIsReportedNotAPanic) {
  ScratchDir dir;
  const std::string serial = boot_on_bochs(dir / "", "corei7_sandy_bridge_2600k", 120);
  EXPECT_TRUE(has(serial, "ETT: cpu GenuineIntel \"Intel(R) Core(TM) i7-2600K CPU @ 3.40GHz\" family 6"))
      << serial;
  EXPECT_TRUE(has(serial,
                  "ETT: SMI count: not available (RDMSR raised #GP: this CPU (or its hypervisor) has no "
                  "such MSR)\n"))
      << serial;
  EXPECT_TRUE(has(serial, "ETT: RESULT OK")) << serial;
  EXPECT_FALSE(has(serial, "PANIC")) << serial;
}

// Bochs's Ice Lake (Core i7-1065G7) reports leaf 0x15 with its crystal: crystal x ratio is 1497.6 MHz. Its
// Skylake-X (Core i7-7800X) has no usable leaf 0x15 (no crystal stated, and not a model whose crystal is
// known), so leaf 0x16's 3500 MHz base is used.
TEST(BochsFirmware, CpuidLeaves15And16GiveTheNominalRate) {
  ScratchDir dir;
  const std::string icelake = boot_on_bochs(dir / "", "corei7_icelake_u", 120);
  EXPECT_TRUE(
      has(icelake, "ETT: tsc nominal rate: 1497600000 Hz +-100 ppm from CPUID 0x15 (crystal x TSC ratio)\n"))
      << icelake;
  ScratchDir dir2;
  const std::string skylake = boot_on_bochs(dir2 / "", "corei7_skylake_x", 120);
  EXPECT_TRUE(
      has(skylake, "ETT: tsc nominal rate: 3500000000 Hz +-5000 ppm from CPUID 0x16 (base frequency)\n"))
      << skylake;
}

}  // namespace
}  // namespace ett::test
