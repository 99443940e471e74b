// uefi_boot_test.cpp: the kernel booted by GRUB's UEFI loader under OVMF: multiboot2, the framebuffer console
// (read back from QEMU's screendump through the kernel's font), the analysis stage's keys, a PC without
// an 8042 that runs unattended, and the trace disk on each interface: legacy IDE on `-M pc`, AHCI and NVMe
// on `-M q35` (controllers OVMF has used before the kernel takes them over).
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/qemu_disks.h"
#include "qemu_direct.h"

namespace ett::test {
namespace {

// OVMF under TCG on a busy 2-core machine takes far longer than SeaBIOS to reach GRUB.
constexpr double kUefiBootSeconds = 120;

std::string screen_text(QemuMachine& qemu, const fs::path& dir) {
  std::string text;
  for (const auto& row : qemu.screen(dir)) text += row + "\n";
  return text;
}

// The same start screen and scroll box as on VGA text, drawn into the GOP framebuffer.
TEST(UefiBoot, StartScreenAndScrollBoxOnTheFramebuffer) {
  ScratchDir dir;
  ASSERT_EQ(run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "4M"}).exit_code, 0);
  const fs::path d = dir / "";
  QemuMachine qemu({.iso = make_test_iso(d, "probe=ivshmem layout=2x4").string(),
                    .disks = {{0, (dir / "trace.img").string()}},
                    .monitor = true,
                    .uefi = true},
                   d);
  ASSERT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", kUefiBootSeconds)) << qemu.serial();
  EXPECT_NE(qemu.serial().find("(multiboot v2, i586 and later), screen: framebuffer "), std::string::npos)
      << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: ACPI RSDP from the boot loader"), std::string::npos) << qemu.serial();
  ASSERT_TRUE(qemu.screen_has(d, 0, "ETT - Event Timestamping Toolkit")) << screen_text(qemu, d);
  EXPECT_TRUE(qemu.screen_has(d, 24, "Enter: start the capture")) << screen_text(qemu, d);
  EXPECT_TRUE(qemu.screen_has(d, 2, "Trace disk: ide primary master")) << screen_text(qemu, d);

  ASSERT_TRUE(qemu.start_capture()) << qemu.serial();
  for (int i = 0; i < 30; ++i) {
    qemu.set_lines(static_cast<uint8_t>(i % 2 ? 0x21 : 0x12));
    const uint32_t beat = qemu.heartbeat();
    qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  }
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 60 events", 30)) << qemu.serial();
  ASSERT_TRUE(qemu.screen_has(d, 24, "1-21 of 60")) << screen_text(qemu, d);
  auto rows = qemu.screen(d);
  ASSERT_EQ(rows.size(), 25u) << "no screendump";
  EXPECT_NE(rows[0].find("60 events, stop: host-request"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[1].substr(0, 28), "         seq  probe  code  l") << rows[1];
  EXPECT_EQ(rows[2].substr(0, 12), "           0") << rows[2];
  EXPECT_EQ(rows[3].substr(0, 26), "           1      2     1 ") << rows[3];
  qemu.send_key("pgdn");
  EXPECT_TRUE(qemu.screen_has(d, 24, "22-42 of 60")) << screen_text(qemu, d);
  EXPECT_EQ(qemu.screen(d)[2].substr(0, 12), "          21");

  qemu.send_key("s");
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: S: saved as session 1", 30)) << qemu.serial();
  EXPECT_TRUE(qemu.screen_has(d, 23, "saved as session 1")) << screen_text(qemu, d);
  auto ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  EXPECT_EQ(sessions[0].at("events").get<int>(), 60) << ls.output;
}

// No 8042 (a UEFI-only PC after ExitBootServices): the controller times out, the kernel starts at once,
// saves by itself and the analysis stage says why it does not wait for keys.
TEST(UefiBoot, NoKeyboardControllerRunsUnattended) {
  ScratchDir dir;
  ASSERT_EQ(run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "4M"}).exit_code, 0);
  const fs::path d = dir / "";
  QemuMachine qemu({.iso = make_test_iso(d, "probe=ivshmem layout=2x4 limit=1").string(),
                    .disks = {{0, (dir / "trace.img").string()}},
                    .monitor = true,
                    .uefi = true,
                    .machine = "pc,i8042=off"},
                   d);
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, kUefiBootSeconds)) << qemu.serial();
  qemu.set_lines(0x11);
  ASSERT_TRUE(qemu.wait_serial("ETT: RESULT OK events=", 30)) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("ETT: no keyboard: port 0x64 reads 0xFF: no controller there: starting at once"),
            std::string::npos)
      << serial;
  EXPECT_NE(serial.find("ETT: start screen: no keyboard, starting at once"), std::string::npos) << serial;
  ASSERT_TRUE(qemu.wait_serial("(no keyboard: the screen stays)", 10)) << serial;
  EXPECT_TRUE(qemu.screen_has(d, 24, "No keyboard: saved by itself; restart the PC to capture again"))
      << screen_text(qemu, d);
  EXPECT_TRUE(qemu.screen_has(d, 23, "port 0x64 reads 0xFF")) << screen_text(qemu, d);
  auto ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  EXPECT_EQ(sessions[0].at("session").get<int>(), 1) << ls.output;
}

// q35 without an 8042: QEMU's FADT (ACPI 2.0+) says so, and the kernel believes it without touching the
// ports.
TEST(UefiBoot, TheFadtSaysThereIsNoKeyboardController) {
  ScratchDir dir;
  const fs::path d = dir / "";
  QemuMachine qemu({.iso = make_test_iso(d, "probe=ivshmem dump=none limit=1").string(),
                    .monitor = true,
                    .uefi = true,
                    .machine = "q35,i8042=off"},
                   d);
  ASSERT_TRUE(qemu.wait_serial("ETT: RESULT OK events=0", kUefiBootSeconds)) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: no keyboard: ACPI says this PC has no 8042 keyboard controller"),
            std::string::npos)
      << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: ivshmem BAR2 moved from 0x"), std::string::npos) << qemu.serial();
}

// OVMF cannot start a multiboot kernel through -kernel: --firmware uefi without --iso is refused up front.
TEST(UefiBoot, FirmwareUefiNeedsTheIso) {
  ScratchDir dir;
  write_scenario(dir / "s.txt", {{0, 1, 1}});
  auto refused = run_ett({"qemu", "run", "--disk", (dir / "t.img").string(), "--scenario",
                          (dir / "s.txt").string(), "--firmware", "uefi"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("--firmware uefi boots only --iso ISO"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir / "t.img"));
  auto unknown = run_ett({"qemu", "run", "--disk", (dir / "t.img").string(), "--scenario",
                          (dir / "s.txt").string(), "--firmware", "efi"});
  EXPECT_NE(unknown.exit_code, 0) << unknown.output;
  EXPECT_NE(unknown.output.find("--firmware"), std::string::npos) << unknown.output;
}

struct UefiDiskCase {
  host::DiskInterface interface;
  const char* model;  // IDENTIFY model as the kernel prints it
  int trace_slot;     // AHCI: port 2 holds the ISO's CD-ROM; NVMe: the second controller
  const char* where;  // the trace disk as the kernel names it
  friend void PrintTo(const UefiDiskCase& c, std::ostream* out) {
    *out << host::disk_interface_name(c.interface);
  }
};

class UefiTraceDisk : public ::testing::TestWithParam<UefiDiskCase> {};

// The real ISO (its QEMU entry) under OVMF on q35: OVMF's own AHCI or NVMe driver has used the controller
// (it read the CD, scanned the disks) before GRUB hands over; the kernel takes it over, finds the labelled
// disk next to an unlabelled one, which stays byte-for-byte the same, dumps, and the events extract exactly.
TEST_P(UefiTraceDisk, IsoBootOnQ35CapturesDumpsAndExtracts) {
  ScratchDir dir;
  write_random_image(dir / "other.img", 2 << 20, 21);
  make_trace_disk(dir / "trace.img");
  const std::string other = slurp(dir / "other.img");
  DirectOptions o;
  o.iso = std::string(ETT_BIN_DIR) + "/ett.iso";
  o.uefi = true;
  o.machine = "q35";
  o.attached = {{(dir / "other.img").string(), GetParam().interface, 0},
                {(dir / "trace.img").string(), GetParam().interface, GetParam().trace_slot}};
  QemuMachine qemu(o, dir / "");
  ASSERT_EQ(capture_and_stop(qemu, 6, kUefiBootSeconds), vprobe::qemu_status_for(vprobe::kExitSuccess))
      << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("(multiboot v2, x86-64, long mode), screen: framebuffer "), std::string::npos) << serial;
  EXPECT_NE(serial.find(std::string(": disk \"") + GetParam().model +
                        "\", 4096 sectors: the disk is not an ETT "
                        "trace disk (run `ett mkdisk`); not touched"),
            std::string::npos)
      << serial;
  EXPECT_NE(serial.find(std::string(": disk \"") + GetParam().model + "\", 32768 sectors: ETT trace disk"),
            std::string::npos)
      << serial;
  EXPECT_NE(serial.find(std::string("ETT: trace disk \"\" (") + GetParam().where), std::string::npos)
      << serial;
  // OVMF puts NVMe's 64-bit BAR0 above 4 GiB; the kernel moves QEMU's controller below (AHCI's BAR5 is
  // 32-bit).
  EXPECT_EQ(serial.find(": BAR0 moved from 0xe0") != std::string::npos,
            GetParam().interface == host::DiskInterface::Nvme)
      << serial;
  EXPECT_TRUE(slurp(dir / "other.img") == other) << "the unlabelled disk was modified";
  expect_extracted(dir / "trace.img", 6);
}

// The command docs/guide/qemu.md shows, on q35 with the trace disk on AHCI or NVMe: `ett qemu run` makes the disk, boots
// the ISO under OVMF, plays the scenario on the guest's clock and checks what the kernel dumped.
TEST_P(UefiTraceDisk, QemuRunFromTheCommandLine) {
  ScratchDir dir;
  {
    std::ofstream scenario(dir / "five.scn");
    scenario << "# five changes of probe 1\n2000 1 1\n4000 1 2\n6000 1 3\n8000 1 4\n10000 1 5\n";
  }
  auto run = run_ett({"qemu", "run", "--firmware", "uefi", "--machine", "q35", "--disk-interface",
                      host::disk_interface_name(GetParam().interface), "--iso",
                      std::string(ETT_BIN_DIR) + "/ett.iso", "--disk", (dir / "trace.img").string(),
                      "--scenario", (dir / "five.scn").string(), "--check", "--timeout", "300",
                      "--serial-log", (dir / "serial.log").string()});
  ASSERT_EQ(run.exit_code, 0) << run.output << slurp(dir / "serial.log");
  const std::string serial = slurp(dir / "serial.log");
  EXPECT_NE(serial.find(std::string(": disk \"") + GetParam().model + "\", 131072 sectors: ETT trace disk"),
            std::string::npos)
      << serial;  // the 64 MiB disk `ett qemu run` made
  expect_extracted(dir / "trace.img", 5);
}

INSTANTIATE_TEST_SUITE_P(
    Interfaces, UefiTraceDisk,
    ::testing::Values(UefiDiskCase{host::DiskInterface::Ahci, "QEMU HARDDISK", 3, "ahci"},
                      UefiDiskCase{host::DiskInterface::Nvme, "QEMU NVMe Ctrl", 1, "nvme"}),
    [](const auto& info) { return std::string(host::disk_interface_name(info.param.interface)); });

}  // namespace
}  // namespace ett::test
