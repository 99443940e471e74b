// stall_boot_test.cpp: a capture measures its own error: QEMU stopped for 40 ms (SIGSTOP/SIGCONT) during a
// capture is one stall of at least 40 ms in the session (`ett ls --json`), in the database's stalls table,
// and `ett analyze durations` flags exactly the actions the capture's stalls touch -- among them the one the
// stop made late by more than any loop-step bound.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "qemu_direct.h"

namespace ett::test {
namespace {

using Clock = std::chrono::steady_clock;

// Whether every thread of process `pid` is in the stopped state ('T' in /proc/PID/task/TID/stat). kill()
// returns before a SIGSTOP has taken effect: the thread the signal is delivered to has to run first and then
// stops the others, so on a busy host QEMU's vCPU can go on for milliseconds after the kill.
bool all_threads_stopped(pid_t pid) {
  std::error_code error;
  bool any = false;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // the thread has exited
    const size_t name_end = line.rfind(')');
    if (name_end == std::string::npos || name_end + 2 >= line.size() || line[name_end + 2] != 'T')
      return false;
    any = true;
  }
  return !error && any;
}

TEST(Stalls, QemuStoppedFor40msIsOneStallAndFlagsExactlyTheActionsStallsTouch) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  ASSERT_EQ(run_ett({"mkdisk", trace.string(), "--size", "16M"}).exit_code, 0);
  QemuMachine qemu({.append = "exit=qemu", .disks = {{0, trace.string()}}}, dir / "");
  ASSERT_TRUE(qemu.wait_state(KernelState::Capturing, 30)) << qemu.serial();

  // 30 actions, one every 25 ms: code k on probe 1 (D0-D3), 10 ms later code k on probe 2 (D4-D7). Each write
  // waits until the kernel has polled it (two heartbeats), so that only a stall can make a stamp late. During
  // action 15, QEMU is stopped for 40 ms and the action's end is written while it is stopped.
  constexpr int kActions = 30, kStopped = 15;
  constexpr auto kStop = std::chrono::milliseconds(40);
  uint8_t lines = 0;
  auto write = [&](uint8_t value) {
    lines = value;
    qemu.set_lines(lines);
  };
  auto seen = [&] {
    const uint32_t beat = qemu.heartbeat();
    return qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  };
  std::vector<double> truth_ns;  // host time from each action's start write to its end write
  const auto begin = Clock::now();
  for (int k = 1; k <= kActions; ++k) {
    const uint8_t code = static_cast<uint8_t>(k % 15 + 1);
    std::this_thread::sleep_until(begin + std::chrono::milliseconds(25 * k));
    write(static_cast<uint8_t>((lines & 0xF0) | code));
    const auto start = Clock::now();
    ASSERT_TRUE(seen()) << qemu.serial();
    std::this_thread::sleep_until(start + std::chrono::milliseconds(10));
    if (k == kStopped) {
      ASSERT_EQ(::kill(qemu.process().pid(), SIGSTOP), 0);
      // The 40 ms count from when every thread has stopped, not from the kill.
      ASSERT_TRUE(qemu.wait_until([&] { return all_threads_stopped(qemu.process().pid()); }, 10));
      const auto stopped = Clock::now();
      std::this_thread::sleep_until(stopped + kStop / 2);
      write(static_cast<uint8_t>((lines & 0x0F) | code << 4));
      truth_ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
      std::this_thread::sleep_until(stopped + kStop);
      ASSERT_EQ(::kill(qemu.process().pid(), SIGCONT), 0);
    } else {
      write(static_cast<uint8_t>((lines & 0x0F) | code << 4));
      truth_ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
    }
    ASSERT_TRUE(seen()) << qemu.serial();
  }
  qemu.request_stop();
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();

  // The session: one stall of at least 40 ms (the host's load may add short ones), and the longest check
  // interval is that stall.
  const auto ls = run_ett({"ls", trace.string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  const auto sessions = nlohmann::json::parse(ls.output);
  ASSERT_EQ(sessions.size(), 1u) << ls.output;
  const double longest_stall = sessions[0].at("longest_stall_ns").get<double>();
  EXPECT_GE(longest_stall, 40e6) << ls.output;
  EXPECT_LT(longest_stall, 1e9) << ls.output;
  EXPECT_GE(sessions[0].at("stall_count").get<int>(), 1) << ls.output;
  EXPECT_GE(sessions[0].at("longest_check_ns").get<double>(), longest_stall) << ls.output;

  // The database: the stalls table holds it, loaded with the events.
  const std::string db = "sqlite:" + (dir / "t.db").string();
  ASSERT_EQ(run_ett({"load", trace.string(), "--db", db}).exit_code, 0);
  const auto all_stalls = run_ett({"sql", "--db", db, "--csv", "SELECT start_ns, length_ns FROM stalls"});
  ASSERT_EQ(all_stalls.exit_code, 0);
  std::vector<std::pair<double, double>> stalls;
  {
    std::stringstream in(all_stalls.output);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      const auto fields = split_csv_line(line);
      if (fields.size() == 2) stalls.emplace_back(std::stod(fields[0]), std::stod(fields[1]));
    }
  }

  // Which events the stalls touch, computed here from the events and the stalls: inside a stall's window, or
  // the first event after it.
  ASSERT_EQ(run_ett({"extract", trace.string(), "-o", (dir / "events.csv").string()}).exit_code, 0);
  const CsvTable events = read_csv(dir / "events.csv");
  std::set<int64_t> touched;
  for (const auto& [start, length] : stalls) {
    for (size_t i = 0; i < events.rows.size(); ++i) {
      const double t = static_cast<double>(events.number(i, "time_ns"));
      if (t < start) continue;
      touched.insert(events.number(i, "seq"));
      if (t > start + length) break;
    }
  }

  // The stall that touches the end of the stopped action (written while QEMU was stopped) is the stop: >= 40
  // ms. (A busy host may add shorter stalls elsewhere; they are flagged by the same rule.)
  double stop_stall = 0;
  for (const auto& [start, length] : stalls) {
    for (size_t i = 0; i < events.rows.size(); ++i) {
      const double t = static_cast<double>(events.number(i, "time_ns"));
      if (t < start) continue;
      if (events.number(i, "probe") == 2 && events.number(i, "code") == kStopped % 15 + 1 &&
          t <= start + length + 1e6)
        stop_stall = std::max(stop_stall, length);
      break;
    }
  }
  EXPECT_GE(stop_stall, 40e6) << all_stalls.output;

  const auto durations = run_ett({"analyze", "durations", "--db", db, "--from", "1", "--to", "2", "--pi-ns",
                                  "1000", "--format", "json"});
  ASSERT_EQ(durations.exit_code, 0) << durations.output;
  const auto report = nlohmann::json::parse(durations.output);
  const auto& actions = report.at("actions");
  ASSERT_EQ(actions.size(), static_cast<size_t>(kActions)) << durations.output;
  int flagged = 0;
  for (int k = 0; k < kActions; ++k) {
    const auto& action = actions[k];
    const bool stall = action.at("stall").get<bool>();
    const bool expected = touched.count(action.at("start_seq").get<int64_t>()) ||
                          touched.count(action.at("end_seq").get<int64_t>());
    EXPECT_EQ(stall, expected) << "action " << k + 1 << ": " << durations.output;
    flagged += stall;
    const double error = action.at("duration_ns").get<double>() - truth_ns[k];
    if (k + 1 == kStopped) {
      // Stamped when QEMU ran again: late by about the rest of the stop, far beyond the loop's bound.
      EXPECT_TRUE(stall) << durations.output;
      EXPECT_GT(error, 5e6) << durations.output;
      EXPECT_GE(action.at("bound_ns").get<double>(), 40e6 + 1000) << durations.output;
    }
    if (!stall) {
      EXPECT_EQ(action.at("bound_ns").get<double>(), 1000) << durations.output;
    }
  }
  EXPECT_EQ(report.at("bound_holds").get<int>(), kActions - flagged) << durations.output;
}

}  // namespace
}  // namespace ett::test
