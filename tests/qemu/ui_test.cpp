// ui_test.cpp: the analysis stage under QEMU: keys sent through the monitor (sendkey), the screen read back
// from VGA text memory (pmemsave of 0xB8000).
#include <nlohmann/json.hpp>

#include "qemu_direct.h"

namespace ett::test {
namespace {

bool screen_has(QemuMachine& qemu, const fs::path& dir, uint32_t row, const std::string& text) {
  return qemu.screen_has(dir, row, text);
}

std::string screen_text(QemuMachine& qemu, const fs::path& dir) {
  std::string text;
  for (const auto& row : qemu.screen(dir)) text += row + "\n";
  return text;
}

// Start screen -> Enter -> capture -> scroll box with PgUp/PgDn/Home/End/arrows -> S saves -> ESC.
TEST(AnalysisStage, StartScreenScrollBoxSaveAndEscape) {
  ScratchDir dir;
  auto made = run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "4M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  QemuMachine qemu({.append = "", .disks = {{1, (dir / "trace.img").string()}}, .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", 30)) << qemu.serial();
  ASSERT_TRUE(screen_has(qemu, dir / "", 0, "ETT - Event Timestamping Toolkit"))
      << screen_text(qemu, dir / "");
  EXPECT_FALSE(qemu.found_probe() && qemu.state() == KernelState::Capturing) << "started without Enter";

  ASSERT_TRUE(qemu.start_capture()) << qemu.serial();
  for (int i = 0; i < 30; ++i) {
    qemu.set_lines(static_cast<uint8_t>(i % 2 ? 0x21 : 0x12));
    const uint32_t beat = qemu.heartbeat();
    qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  }
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 60 events", 20)) << qemu.serial();
  const fs::path d = dir / "";
  ASSERT_TRUE(screen_has(qemu, d, 24, "1-21 of 60")) << screen_text(qemu, d);
  auto rows = qemu.screen(d);
  EXPECT_NE(rows[0].find("60 events, stop: host-request"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[2].substr(0, 12), "           0") << rows[2];
  EXPECT_EQ(rows[3].substr(0, 26), "           1      2     1 ") << rows[3];  // simultaneous: probe 2 after 1

  qemu.send_key("pgdn");
  EXPECT_TRUE(screen_has(qemu, d, 24, "22-42 of 60")) << screen_text(qemu, d);
  EXPECT_EQ(qemu.screen(d)[2].substr(0, 12), "          21");
  qemu.send_key("end");
  EXPECT_TRUE(screen_has(qemu, d, 24, "40-60 of 60")) << screen_text(qemu, d);
  qemu.send_key("pgdn");                                        // already at the end: stays
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // nothing to wait for on screen
  EXPECT_TRUE(screen_has(qemu, d, 24, "40-60 of 60")) << screen_text(qemu, d);
  qemu.send_key("up");
  EXPECT_TRUE(screen_has(qemu, d, 24, "39-59 of 60")) << screen_text(qemu, d);
  qemu.send_key("pgup");
  EXPECT_TRUE(screen_has(qemu, d, 24, "18-38 of 60")) << screen_text(qemu, d);
  qemu.send_key("home");
  EXPECT_TRUE(screen_has(qemu, d, 24, "1-21 of 60")) << screen_text(qemu, d);
  qemu.send_key("down");
  EXPECT_TRUE(screen_has(qemu, d, 24, "2-22 of 60")) << screen_text(qemu, d);

  // Nothing is saved until S.
  auto ls = run_ett({"ls", (dir / "trace.img").string()});
  EXPECT_NE(ls.output.find("empty trace disk"), std::string::npos) << ls.output;
  qemu.send_key("s");
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: S: saved as session 1", 20)) << qemu.serial();
  EXPECT_TRUE(screen_has(qemu, d, 23, "saved as session 1")) << screen_text(qemu, d);
  ls = run_ett({"ls", (dir / "trace.img").string(), "--json"});
  {
    const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
    ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
    EXPECT_EQ(sessions[0].at("events").get<int>(), 60) << ls.output;
  }
  qemu.send_key("s");
  EXPECT_TRUE(qemu.wait_serial("S: already saved", 10)) << qemu.serial();

  const size_t mark = qemu.serial().size();
  qemu.send_key("esc");
  EXPECT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", 10, mark)) << qemu.serial();
  EXPECT_TRUE(screen_has(qemu, d, 0, "ETT - Event Timestamping Toolkit")) << screen_text(qemu, d);
}

// A full disk: S is refused with the reason, and the capture stays on screen.
TEST(AnalysisStage, FullDiskRefusesSaveAndKeepsTheCaptureOnScreen) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  ASSERT_EQ(run_ett({"mkdisk", trace.string(), "--size", "41472"}).exit_code, 0);
  {  // fill it
    QemuMachine qemu({.append = "exit=qemu", .disks = {{0, trace.string()}}}, dir / "");
    ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 30)) << qemu.serial();
    qemu.request_stop();
    ASSERT_TRUE(qemu.wait_exit(30));
  }
  const std::string before = slurp(trace);
  QemuMachine qemu({.append = "auto=1", .disks = {{0, trace.string()}}, .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 30)) << qemu.serial();  // auto=1: no Enter needed
  qemu.set_lines(0x11);
  const uint32_t beat = qemu.heartbeat();
  qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  qemu.request_stop();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 2 events", 20)) << qemu.serial();
  const fs::path d = dir / "";
  EXPECT_TRUE(screen_has(qemu, d, 23, "the trace disk is full: room for 0 events, the capture has 2"))
      << screen_text(qemu, d);
  // The analysis stage empties the keyboard buffer before its serial line, so one press should do; a refused
  // S changes nothing, so pressing again is harmless.
  bool answered = false;
  for (int attempt = 0; attempt < 5 && !answered; ++attempt) {
    qemu.send_key("s");
    answered = qemu.wait_serial("S: not saved: the trace disk is full", 2);
  }
  EXPECT_TRUE(answered) << qemu.serial();
  EXPECT_TRUE(screen_has(qemu, d, 2, "           0")) << screen_text(qemu, d);
  EXPECT_TRUE(slurp(trace) == before);
}

}  // namespace
}  // namespace ett::test
