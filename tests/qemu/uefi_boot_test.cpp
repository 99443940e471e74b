// uefi_boot_test.cpp: the kernel booted by GRUB's UEFI loader under OVMF: multiboot2, the framebuffer console
// (read back from QEMU's screendump through the kernel's font), the analysis stage's keys, and a PC without
// an 8042 that runs unattended. OVMF on `-M pc`: the trace disk stays on legacy IDE, which the kernel drives.
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
  EXPECT_NE(ls.output.find("\"events\":60,"), std::string::npos) << ls.output;
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
  EXPECT_NE(ls.output.find("\"session\":1"), std::string::npos) << ls.output;
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

}  // namespace
}  // namespace ett::test
