// loop_bench_boot_test.cpp: bench=N under QEMU -icount (`--clock guest`), where the guest's TSC counts
// executed instructions: every round of the capture loop takes more ticks than a round of the bare-poll
// floor, and every window gives the same counts. Instruction counts, not timing: the host's load does not
// enter.
#include <regex>
#include <set>
#include <tuple>

#include "qemu_test_support.h"

namespace ett::test {
namespace {

struct BenchWindow {
  uint64_t loop_polls, loop_ticks, loop_fastest, floor_polls, floor_ticks, floor_fastest;
  bool stalled;
  bool operator<(const BenchWindow& o) const {
    return std::tie(loop_fastest, floor_fastest) < std::tie(o.loop_fastest, o.floor_fastest);
  }
};

std::vector<BenchWindow> bench_on_guest_clock(const std::string& probe_options) {
  ScratchDir dir;
  // The injector plays from the capture's start, after the benchmark: the lines stay idle meanwhile.
  write_scenario(dir / "late.scn", {{0, 1, 1}, {900000, 1, 2}});
  const CommandResult run =
      run_ett({"qemu", "run", "--disk", (dir / "trace.img").string(), "--scenario",
               (dir / "late.scn").string(), "--serial-log", (dir / "serial.log").string(), "--timeout", "120",
               "--clock", "guest", "--append", "bench=20 limit=0.1 dump=none " + probe_options});
  const std::string serial = slurp(dir / "serial.log");
  EXPECT_NE(serial.find("ETT: bench done"), std::string::npos) << run.output << serial;
  const std::regex line(
      R"(ETT: bench window \d+: loop (\d+) polls (\d+) ticks fastest (\d+)( stalled)?, floor (\d+) polls (\d+) )"
      R"(ticks fastest (\d+)( stalled)?)");
  std::vector<BenchWindow> windows;
  for (auto it = std::sregex_iterator(serial.begin(), serial.end(), line); it != std::sregex_iterator(); ++it)
    windows.push_back({std::stoull((*it)[1]), std::stoull((*it)[2]), std::stoull((*it)[3]),
                       std::stoull((*it)[5]), std::stoull((*it)[6]), std::stoull((*it)[7]),
                       (*it)[4].matched || (*it)[8].matched});
  return windows;
}

void expect_loop_above_floor(const std::string& probe_options) {
  SCOPED_TRACE(probe_options);
  const std::vector<BenchWindow> windows = bench_on_guest_clock(probe_options);
  ASSERT_EQ(windows.size(), 20u);
  for (const BenchWindow& w : windows) {
    EXPECT_FALSE(w.stalled) << "the guest's clock does not see the host's stalls";
    EXPECT_GT(w.loop_polls, 0u);
    EXPECT_GT(w.floor_polls, 0u);
    // A round of either side is 1024 polls of at least 5 instructions.
    EXPECT_GE(w.floor_fastest, 5u * 1024u);
    // The loop's round runs the floor's idle steps and a stop check that does more than the floor's TSC read.
    EXPECT_GT(w.loop_fastest, w.floor_fastest);
    EXPECT_GE(w.loop_ticks, w.loop_fastest * (w.loop_polls / 1024));
    EXPECT_GE(w.floor_ticks, w.floor_fastest * (w.floor_polls / 1024));
  }
  EXPECT_EQ(std::set<BenchWindow>(windows.begin(), windows.end()).size(), 1u)
      << "rounds differ between windows";
}

TEST(LoopBench, OnTheGuestClockTheLoopRoundRunsMoreThanTheFloorRound) {
  expect_loop_above_floor("probe=ivshmem");
  expect_loop_above_floor("probe=lpt");
  expect_loop_above_floor("probe=ivshmem filter=XXXX1111");
}

}  // namespace
}  // namespace ett::test
