// injector_test.cpp: scenario playback into a byte: order, simultaneous writes, timing, stopping early.
#include "harness/injector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ett::host {
namespace {

TEST(Injector, PlaysWritesInOrderAndOnTime) {
  auto scenario = parse_scenario("0 1 1\n1000 2 3\n1000 1 0\n2000 1 5\n", "t", ProbeLayout());
  ASSERT_TRUE(scenario.ok());
  uint8_t lines = 0;
  const PlayResult played = play_scenario(*scenario, &lines, [] { return true; });
  EXPECT_FALSE(played.stopped_early);
  EXPECT_EQ(played.writes_done, 3u);
  ASSERT_EQ(played.sent.size(), 4u);
  EXPECT_EQ(lines, 0x35);
  for (size_t i = 0; i < played.sent.size(); ++i) {
    EXPECT_EQ(played.sent[i].index, i);
    EXPECT_GE(played.sent[i].sent_ns, played.sent[i].scheduled_ns);
  }
  EXPECT_EQ(played.sent[1].sent_ns, played.sent[2].sent_ns);  // one simultaneous write
  EXPECT_EQ(played.sent[1].lines, 0x30);
  EXPECT_GE(played.duration_ns, 2'000'000u);

  // keep_going() is asked while waiting; false stops the playback.
  auto slow = parse_scenario("0 1 1\n50000 1 2\n", "t", ProbeLayout());
  ASSERT_TRUE(slow.ok());
  const PlayResult stopped = play_scenario(*slow, &lines, [] { return false; });
  EXPECT_TRUE(stopped.stopped_early);
  EXPECT_EQ(stopped.sent.size(), 1u);
}

// With a heartbeat, a write waits until the kernel has polled since the previous one, however late that makes
// it.
TEST(Injector, PacedWritesWaitForTheKernelsHeartbeat) {
  auto scenario = parse_scenario("0 1 1\n100 1 2\n200 1 3\n", "t", ProbeLayout());
  ASSERT_TRUE(scenario.ok());
  uint8_t lines = 0;

  // A kernel that never polls again: only the first write goes out, and keep_going() still ends the wait.
  uint32_t frozen = 0;
  int asked = 0;
  const PlayResult stuck = play_scenario(
      *scenario, &lines, [&] { return ++asked < 3; }, std::nullopt, &frozen);
  EXPECT_TRUE(stuck.stopped_early);
  EXPECT_EQ(stuck.sent.size(), 1u);

  // A kernel that stalls for 20 ms and then polls: every write goes out, the stalled ones late and counted.
  uint32_t beat = 0;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> resumed{0};  // when the "kernel" polled again, on the injector's clock
  std::thread kernel([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    resumed = monotonic_ns();
    while (!done.load()) {
      std::atomic_ref<uint32_t>(beat).fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  const PlayResult paced = play_scenario(
      *scenario, &lines, [] { return true; }, std::nullopt, &beat);
  done = true;
  kernel.join();
  ASSERT_EQ(paced.sent.size(), 3u);
  EXPECT_EQ(lines, 3);
  // Held back by the stall, not sent at 100 us: after the kernel polled again (the play may have started a
  // little after the stall did, on a loaded host, so the stall's length is not the bound).
  EXPECT_GE(paced.start_monotonic_ns + paced.sent[1].sent_ns, resumed.load());
  EXPECT_GE(paced.paced_writes, 1u);
}

// Several probes on one clock: each gets its own writes, in time order across targets, and each send is
// recorded for its own target with its own host TSC.
TEST(Injector, SeveralTargetsShareOneClock) {
  auto first = parse_scenario("0 1 1\n2000 1 2\n", "a", ProbeLayout());
  auto second = parse_scenario("0 2 3\n1000 2 4\n2000 2 5\n", "b", ProbeLayout());
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  uint8_t lines_a = 0, lines_b = 0;
  const PlayResult played = play_scenarios(
      {PlayTarget{&*first, &lines_a, nullptr}, PlayTarget{&*second, &lines_b, nullptr}}, [] { return true; });
  EXPECT_EQ(played.writes_done, 5u);
  ASSERT_EQ(played.sent_per_target.size(), 2u);
  ASSERT_EQ(played.sent_per_target[0].size(), 2u);
  ASSERT_EQ(played.sent_per_target[1].size(), 3u);
  EXPECT_EQ(lines_a, 0x02);
  EXPECT_EQ(lines_b, 0x50);
  // At 0 and at 2 ms both targets are written back to back, the first target first.
  EXPECT_LT(played.sent_per_target[0][0].host_tsc, played.sent_per_target[1][0].host_tsc);
  EXPECT_LT(played.sent_per_target[1][1].host_tsc, played.sent_per_target[0][1].host_tsc);
  EXPECT_LT(played.sent_per_target[0][1].host_tsc, played.sent_per_target[1][2].host_tsc);
  EXPECT_GE(played.sent_per_target[1][1].sent_ns, 1'000'000u);
}

}  // namespace
}  // namespace ett::host
