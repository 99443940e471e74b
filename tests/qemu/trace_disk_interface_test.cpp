// trace_disk_interface_test.cpp: boot tests of the trace disk on each interface the kernel searches: IDE
// (-M pc), AHCI (q35's built-in controller) and NVMe, each next to an unlabelled disk on another port or
// controller that stays byte-for-byte identical; booted with -kernel and from the GRUB ISO; a full disk and a
// missing label on each; `ett qemu run --machine --disk-interface` from the command line.
#include <cctype>
#include <fstream>
#include <sstream>

#include "harness/qemu_disks.h"
#include "qemu_direct.h"

namespace ett::test {
namespace {

using host::AttachedDisk;
using host::DiskInterface;

constexpr double kBootSeconds = 30;
const int kSuccess = vprobe::qemu_status_for(vprobe::kExitSuccess);
const int kFailure = vprobe::qemu_status_for(vprobe::kExitFailure);
constexpr uint64_t kTraceSectors = 32768;  // 16 MiB
constexpr uint64_t kOtherSectors = 4096;   // 2 MiB

struct InterfaceCase {
  DiskInterface interface;
  const char* machine;
  const char* model;  // IDENTIFY model as the kernel prints it
  int other_slot;
  int trace_slot;      // -kernel boot
  int iso_trace_slot;  // ISO boot: the CD-ROM has IDE index 2 on pc, AHCI port 2 on q35
  friend void PrintTo(const InterfaceCase& c, std::ostream* out) {
    *out << host::disk_interface_name(c.interface);
  }
};

const InterfaceCase kCases[] = {
    {DiskInterface::Ide, "pc", "QEMU HARDDISK", 0, 1, 3},
    {DiskInterface::Ahci, "q35", "QEMU HARDDISK", 0, 1, 3},
    {DiskInterface::Nvme, "q35", "QEMU NVMe Ctrl", 0, 1, 1},
};

class TraceDiskInterface : public ::testing::TestWithParam<InterfaceCase> {
 protected:
  DirectOptions options(std::vector<std::pair<int, std::string>> disks,
                        const std::string& append = "exit=qemu") {
    DirectOptions o;
    o.machine = GetParam().machine;
    o.append = append;
    for (auto& [slot, path] : disks) o.attached.push_back(AttachedDisk{path, GetParam().interface, slot});
    return o;
  }
  std::string line(uint64_t sectors, const std::string& verdict) const {
    return std::string(": disk \"") + GetParam().model + "\", " + std::to_string(sectors) +
           " sectors: " + verdict;
  }
};

TEST_P(TraceDiskInterface, KernelBootCapturesDumpsAndExtracts) {
  ScratchDir dir;
  write_random_image(dir / "other.img", kOtherSectors * 512, 11);
  make_trace_disk(dir / "trace.img");
  DirectOptions o = options({{GetParam().other_slot, (dir / "other.img").string()},
                             {GetParam().trace_slot, (dir / "trace.img").string()}});
  const std::string other = slurp(dir / "other.img");
  QemuMachine qemu(o, dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 5), kSuccess) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(
      serial.find(line(kOtherSectors, "the disk is not an ETT trace disk (run `ett mkdisk`); not touched")),
      std::string::npos)
      << serial;
  EXPECT_NE(serial.find(line(kTraceSectors, "ETT trace disk")), std::string::npos) << serial;
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
  expect_extracted(dir / "trace.img", 5);
}

TEST_P(TraceDiskInterface, IsoBootCapturesDumpsAndExtracts) {
  ScratchDir dir;
  write_random_image(dir / "other.img", kOtherSectors * 512, 12);
  make_trace_disk(dir / "trace.img");
  DirectOptions o = options({{GetParam().other_slot, (dir / "other.img").string()},
                             {GetParam().iso_trace_slot, (dir / "trace.img").string()}});
  o.iso = std::string(ETT_BIN_DIR) + "/ett.iso";
  const std::string other = slurp(dir / "other.img");
  QemuMachine qemu(o, dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 4), kSuccess) << qemu.serial();
  EXPECT_NE(qemu.serial().find(line(kTraceSectors, "ETT trace disk")), std::string::npos) << qemu.serial();
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
  expect_extracted(dir / "trace.img", 4);
}

// Two unlabelled disks and no trace disk: refused before capturing, both disks untouched.
TEST_P(TraceDiskInterface, NoLabelledDiskIsRefusedAndNothingIsWritten) {
  ScratchDir dir;
  const std::string first = write_random_image(dir / "a.img", 1 << 20, 1);
  const std::string second = write_random_image(dir / "b.img", 1 << 20, 2);
  QemuMachine qemu(options({{GetParam().other_slot, (dir / "a.img").string()},
                            {GetParam().trace_slot, (dir / "b.img").string()}}),
                   dir / "");
  auto exit = qemu.wait_exit(kBootSeconds);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, kFailure);
  EXPECT_NE(
      qemu.serial().find("RESULT FAILED no ETT trace disk found (2 disks searched on IDE, AHCI and NVMe)"),
      std::string::npos)
      << qemu.serial();
  EXPECT_TRUE(slurp(dir / "a.img") == first);
  EXPECT_TRUE(slurp(dir / "b.img") == second);
}

// The smallest trace disk holds one session of one chunk. Once it is used, the next capture still runs (in
// RAM), its dump is refused with a message that names the numbers, and the disk is not written.
TEST_P(TraceDiskInterface, FullDiskRefusesTheDumpAndWritesNothing) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  make_trace_disk(trace, "41472");  // label + 7 sectors + one session header, its stall table and one chunk
  {
    QemuMachine qemu(options({{GetParam().trace_slot, trace.string()}}), dir / "");
    ASSERT_EQ(capture_and_stop(qemu, 2), kSuccess) << qemu.serial();
  }
  const std::string before = slurp(trace);
  QemuMachine qemu(options({{GetParam().trace_slot, trace.string()}}), dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 4), kFailure) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("the trace disk is full (room for 0 events): the capture will stay in RAM"),
            std::string::npos)
      << serial;
  EXPECT_NE(
      serial.find("RESULT FAILED the trace disk is full: room for 0 events, the capture has 4; nothing was "
                  "written"),
      std::string::npos)
      << serial;
  EXPECT_TRUE(slurp(trace) == before) << "the full disk was written";
}

// `ett qemu run --machine M --disk-interface I` from the command line: the scenario's events on the disk.
TEST_P(TraceDiskInterface, QemuRunFromTheCommandLine) {
  ScratchDir dir;
  {
    std::ofstream scenario(dir / "five.scn");
    scenario << "# five changes of probe 1\n2000 1 1\n4000 1 2\n6000 1 3\n8000 1 4\n10000 1 5\n";
  }
  auto run = run_ett({"qemu", "run", "--machine", GetParam().machine, "--disk-interface",
                      host::disk_interface_name(GetParam().interface), "--disk", (dir / "trace.img").string(),
                      "--scenario", (dir / "five.scn").string(), "--check", "--serial-log",
                      (dir / "serial.log").string()});
  ASSERT_EQ(run.exit_code, 0) << run.output << slurp(dir / "serial.log");
  EXPECT_NE(slurp(dir / "serial.log").find(line(131072, "ETT trace disk")), std::string::npos)
      << slurp(dir / "serial.log");  // the 64 MiB disk `ett qemu run` made
  expect_extracted(dir / "trace.img", 5);
}

INSTANTIATE_TEST_SUITE_P(Interfaces, TraceDiskInterface, ::testing::ValuesIn(kCases), [](const auto& info) {
  return std::string(host::disk_interface_name(info.param.interface));
});

}  // namespace
}  // namespace ett::test
