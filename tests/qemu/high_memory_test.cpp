// high_memory_test.cpp: the x86-64 kernel (ett-kernel64.elf). On a q35 PC with 6 GiB of RAM, its capture
// buffer forced above 4 GiB (buffer=above4g): the events are stored above 4 GiB through the buffer window,
// dumped from there to an AHCI or NVMe trace disk, and `ett extract` reads back exactly what was played. Also:
// a capture across buffer pieces (buffer=split), GRUB's choice of kernel by the CPU, and its exception path.
#include <algorithm>
#include <fstream>
#include <regex>

#include "qemu_direct.h"
#include "qemu_test_support.h"

namespace ett::test {
namespace {

constexpr int kEvents = 300;

std::vector<ScenarioEvent> scenario() {
  std::vector<ScenarioEvent> events;
  for (int i = 0; i < kEvents; ++i) events.push_back({i * 300.0, 1 + i % 2, 1 + (i / 2) % 15});
  return events;
}

void capture_above_4g(const std::string& disk_interface) {
  ScratchDir dir;
  const std::vector<ScenarioEvent> events = scenario();
  write_scenario(dir / "scenario.txt", events);
  const auto run = run_ett({"qemu",
                            "run",
                            "--disk",
                            (dir / "trace.img").string(),
                            "--scenario",
                            (dir / "scenario.txt").string(),
                            "--kernel",
                            std::string(ETT_BIN_DIR) + "/ett-kernel64.elf",
                            "--qemu",
                            "qemu-system-x86_64",
                            "--machine",
                            "q35",
                            "--memory",
                            "6144",
                            "--disk-interface",
                            disk_interface,
                            "--append",
                            "buffer=above4g",
                            "--serial-log",
                            (dir / "serial.log").string(),
                            "--timeout",
                            "240",
                            "--boot-timeout",
                            "120"});
  const std::string serial = slurp(dir / "serial.log");
  ASSERT_EQ(run.exit_code, 0) << run.output << serial;

  // Every piece of the buffer lies above 4 GiB (q35 with 6 GiB: 4 GiB of RAM from 0x100000000).
  const std::regex piece(R"(ETT: capture buffer piece \d+: 0x([0-9a-f]+)-0x([0-9a-f]+), (\d+) MiB)");
  int pieces = 0;
  for (auto it = std::sregex_iterator(serial.begin(), serial.end(), piece); it != std::sregex_iterator();
       ++it) {
    ++pieces;
    EXPECT_GE(std::stoull((*it)[1].str(), nullptr, 16), 0x100000000ull) << it->str();
  }
  EXPECT_GE(pieces, 1) << serial;
  const std::regex total(R"(ETT: capture buffer: \d+ pieces mapped at 0x[0-9a-f]+, (\d+) MiB: (\d+) events)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(serial, match, total)) << serial;
  EXPECT_GE(std::stoull(match[1].str()), 4000u) << "the 4 GiB above 4 GiB, less the 2 MiB alignment";

  const auto extract =
      run_ett({"extract", (dir / "trace.img").string(), "-o", (dir / "events.csv").string(), "--force"});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable captured = read_csv(dir / "events.csv");
  ASSERT_EQ(captured.rows.size(), events.size()) << "events lost or invented";
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_EQ(captured.number(i, "probe"), events[i].probe) << "event " << i;
    ASSERT_EQ(captured.number(i, "code"), events[i].code) << "event " << i;
    if (i > 0) {
      ASSERT_GT(captured.number(i, "tsc"), captured.number(i - 1, "tsc")) << "event " << i;
    }
  }
}

TEST(HighMemory, X86_64KernelCapturesAbove4GiBAndDumpsToAhci) {
  capture_above_4g("ahci");
}

TEST(HighMemory, X86_64KernelCapturesAbove4GiBAndDumpsToNvme) {
  capture_above_4g("nvme");
}

// buffer=split maps only the first 2 MiB of each free piece (one below 4 GiB, one above): a calibrate capture
// (a record per loop step) fills both, 2 x 131072 records, and the dump must hold them all in step order. A
// window that mapped the second piece over the first, or anywhere else, would reorder or lose the first
// piece's records.
TEST(HighMemory, X86_64KernelCaptureRunsAcrossBufferPieces) {
  ScratchDir dir;
  ASSERT_EQ(run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "16M"}).exit_code, 0);
  std::ofstream(dir / "late.scn") << "0 1 1\n30000000 1 2\n";  // after the capture: no host stop
  const auto run = run_ett({"qemu",
                            "run",
                            "--disk",
                            (dir / "trace.img").string(),
                            "--scenario",
                            (dir / "late.scn").string(),
                            "--kernel",
                            std::string(ETT_BIN_DIR) + "/ett-kernel64.elf",
                            "--qemu",
                            "qemu-system-x86_64",
                            "--machine",
                            "q35",
                            "--memory",
                            "6144",
                            "--disk-interface",
                            "nvme",
                            "--append",
                            "mode=calibrate limit=5 buffer=split",
                            "--serial-log",
                            (dir / "serial.log").string(),
                            "--timeout",
                            "240"});
  const std::string serial = slurp(dir / "serial.log");
  ASSERT_NE(serial.find("ETT: capture buffer piece 2: 0x100000000-0x100200000, 2 MiB"), std::string::npos)
      << run.output << serial;
  constexpr size_t kRecords = 2 * (2u << 20) / 16;
  ASSERT_NE(serial.find("ETT: captured " + std::to_string(kRecords) + " events (stop: buffer-full)"),
            std::string::npos)
      << serial;
  const auto extract =
      run_ett({"extract", (dir / "trace.img").string(), "-o", (dir / "steps.csv").string(), "--force"});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable steps = read_csv(dir / "steps.csv");
  ASSERT_EQ(steps.rows.size(), kRecords);
  for (size_t i = 1; i < steps.rows.size(); ++i) {
    ASSERT_GT(steps.number(i, "tsc"), steps.number(i - 1, "tsc")) << "record " << i;
  }
}

// boot/grub.cfg picks the kernel with `cpuid -l`: a BIOS PC whose CPU has long mode (qemu-system-x86_64's
// default CPU) boots the x86-64 kernel, one without (qemu-system-i386's) the i686 kernel; both capture.
TEST(HighMemory, TheIsoBootsTheKernelThatFitsTheCpu) {
  for (const auto& [qemu, banner] :
       {std::pair<std::string, std::string>{"qemu-system-x86_64", "x86-64, long mode"},
        {"qemu-system-i386", "i586 and later"}}) {
    ScratchDir dir;
    write_scenario(dir / "scenario.txt", scenario());
    const auto run =
        run_ett({"qemu", "run", "--disk", (dir / "trace.img").string(), "--scenario",
                 (dir / "scenario.txt").string(), "--iso", std::string(ETT_BIN_DIR) + "/ett.iso", "--qemu",
                 qemu, "--serial-log", (dir / "serial.log").string(), "--timeout", "240"});
    const std::string serial = slurp(dir / "serial.log");
    ASSERT_EQ(run.exit_code, 0) << run.output << serial;
    EXPECT_NE(serial.find("ETT: capture kernel (multiboot v2, " + banner + ")"), std::string::npos) << serial;
    EXPECT_NE(run.output.find("sent 300, captured 300, lost 0"), std::string::npos) << run.output;
  }
}

// The x86-64 kernel's IDT (16-byte gates, 64-bit frames): an NMI during the capture is reported with its rip,
// and the kernel leaves QEMU with the failure status.
TEST(HighMemory, X86_64KernelReportsAnExceptionWithItsRip) {
  ScratchDir dir;
  QemuMachine qemu({.kernel = std::string(ETT_BIN_DIR) + "/ett-kernel64.elf",
                    .append = "exit=qemu dump=none",
                    .monitor = true,
                    .qemu = "qemu-system-x86_64"},
                   dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 90)) << qemu.serial();
  qemu.monitor("nmi");
  auto exit = qemu.wait_exit(30);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: RESULT FAILED panic: cpu exception 0x02 (NMI) at rip=0x0000000000"),
            std::string::npos)
      << qemu.serial();
}

}  // namespace
}  // namespace ett::test
