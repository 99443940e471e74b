// keyboard_test.cpp: keyboard=1 as a measurement PC runs it: the start screen waits for Enter, Enter is held
// for hundreds of ms (its release arrives during the capture), events are played, and only a new key press
// ends the capture; every event is there.
#include <nlohmann/json.hpp>

#include "qemu_direct.h"

namespace ett::test {
namespace {

TEST(Keyboard, SlowEnterDoesNotStopTheCaptureANewKeyDoes) {
  ScratchDir dir;
  const fs::path disk = dir / "trace.img";
  auto made = run_ett({"mkdisk", disk.string(), "--size", "4M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  QemuMachine qemu({.append = "keyboard=1", .disks = {{1, disk.string()}}, .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", 60)) << qemu.serial();
  // Enter held 400 ms; the start screen drops keys pressed before it reads the keyboard, so press until it
  // starts.
  bool started = false;
  for (int attempt = 0; attempt < 5 && !started; ++attempt) {
    qemu.monitor("sendkey ret 400");
    started = qemu.wait_state(KernelState::Capturing, 2);
  }
  ASSERT_TRUE(started) << qemu.serial();
  // Past the release of Enter: the capture is still running.
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_EQ(qemu.state(), KernelState::Capturing) << qemu.serial();

  for (int i = 0; i < 10; ++i) {
    qemu.set_lines(static_cast<uint8_t>(i % 2 ? 0x21 : 0x12));
    const uint32_t beat = qemu.heartbeat();
    ASSERT_TRUE(qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 10))
        << qemu.serial();
  }
  ASSERT_EQ(qemu.state(), KernelState::Capturing) << qemu.serial();
  qemu.send_key("a");
  ASSERT_TRUE(qemu.wait_serial("ETT: captured 20 events (stop: keyboard)", 20)) << qemu.serial();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 20 events", 20)) << qemu.serial();

  // S saves: the disk holds all 20, stopped by the keyboard.
  for (int attempt = 0; attempt < 5; ++attempt) {
    qemu.send_key("s");
    if (qemu.wait_serial("ETT: analysis stage: S: saved as session 1", 4)) break;
  }
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: S: saved as session 1", 20)) << qemu.serial();
  auto ls = run_ett({"ls", disk.string(), "--json"});
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  EXPECT_EQ(sessions[0].at("events").get<int>(), 20) << ls.output;
  EXPECT_EQ(sessions[0].at("stop_reason"), "keyboard") << ls.output;
  auto extract = run_ett({"extract", disk.string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable table = read_csv(dir / "events.csv");
  ASSERT_EQ(table.rows.size(), 20u);
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const bool odd = (i / 2) % 2;  // two events per write: 0x12 then 0x21
    const int probe = int(table.number(i, "probe"));
    EXPECT_EQ(probe, 1 + int(i % 2)) << i;
    EXPECT_EQ(table.number(i, "code"), probe == 1 ? (odd ? 1 : 2) : (odd ? 2 : 1)) << i;
  }
}

}  // namespace
}  // namespace ett::test
