// cpu_models_test.cpp: the kernel on older CPUs: a Pentium (TSC, no cmov) and a Pentium III (no invariant
// TSC, SSE2 missing: plain rdtsc) capture, dump and extract a scenario; a 486 (no TSC) is refused with a
// clear message instead of faulting. Also: mode=hwlat runs without any probe.
#include "qemu_direct.h"

namespace ett::test {
namespace {

struct Event {
  int probe;
  int code;
  bool operator==(const Event&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Event& e) {
  return out << "(" << e.probe << "," << e.code << ")";
}

// Captures 20 events on `cpu` (ten writes of two probes each), dumps them and checks them with `ett extract`.
void capture_on(const std::string& cpu, const std::string& family_line) {
  ScratchDir dir;
  const fs::path disk = dir / "trace.img";
  auto made = run_ett({"mkdisk", disk.string(), "--size", "4M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  QemuMachine qemu({.append = "exit=qemu", .disks = {{1, disk.string()}}, .qemu_args = {"-cpu", cpu}},
                   dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 90)) << qemu.serial();
  std::vector<Event> expected;
  for (int i = 0; i < 10; ++i) {
    const bool odd = i % 2;
    qemu.set_lines(static_cast<uint8_t>(odd ? 0x21 : 0x12));
    expected.push_back({1, odd ? 1 : 2});
    expected.push_back({2, odd ? 2 : 1});
    const uint32_t beat = qemu.heartbeat();
    ASSERT_TRUE(qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 10))
        << qemu.serial();
  }
  qemu.request_stop();
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited && exit->status == 33)
      << (exit ? exit->describe() : "running") << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find(family_line), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT OK events=20 session=1"), std::string::npos) << serial;

  auto extract = run_ett({"extract", disk.string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable table = read_csv(dir / "events.csv");
  std::vector<Event> events;
  for (size_t i = 0; i < table.rows.size(); ++i)
    events.push_back({int(table.number(i, "probe")), int(table.number(i, "code"))});
  EXPECT_EQ(events, expected);
}

// A P5 has a TSC but no cmov (an i686 build died there with #UD) and no SSE2 (no lfence).
TEST(CpuModels, PentiumCapturesDumpsAndExtracts) {
  capture_on("pentium", "ETT: cpu GenuineIntel \"?\" family 5\n");
}

TEST(CpuModels, Pentium3CapturesDumpsAndExtracts) {
  capture_on("pentium3", "family 6");
}

TEST(CpuModels, A486IsRefusedBeforeTheFirstRdtsc) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none", .qemu_args = {"-cpu", "486"}}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("ETT: RESULT FAILED this CPU (\"GenuineIntel\", family 4) has no time-stamp counter "
                        "(CPUID.1:EDX bit 4 clear): ETT needs a Pentium or newer\n"),
            std::string::npos)
      << serial;
  EXPECT_EQ(serial.find("PANIC"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("ETT: tsc"), std::string::npos) << "nothing that reads the TSC ran";
}

// The exception path on a Pentium: an NMI from QEMU's monitor during the capture (interrupts off do not mask
// it) is reported by vector, name and eip, and the kernel leaves QEMU with the failure status instead of
// faulting again inside its own handler.
TEST(CpuModels, ExceptionIsReportedOnAPentium) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none", .monitor = true, .qemu_args = {"-cpu", "pentium"}},
                   dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 90)) << qemu.serial();
  qemu.monitor("nmi");
  auto exit = qemu.wait_exit(30);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("ETT: PANIC cpu exception 0x02 (NMI) at eip=0x"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT FAILED panic: cpu exception 0x02 (NMI) at eip=0x"), std::string::npos)
      << serial;
}

// mode=hwlat reads only the clock: a probe that is not there (no PCI parallel card under QEMU) does not stop
// it.
TEST(CpuModels, HwlatNeedsNoProbe) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none mode=hwlat probe=pci-lpt limit=0.1"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("ETT: mode=hwlat reads no probe"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("pci-lpt: no PCI"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT OK"), std::string::npos) << serial;
}

}  // namespace
}  // namespace ett::test
