// injector_test.cpp: scenario playback into a byte: order, simultaneous writes, timing, stopping early.
#include "harness/injector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// A span whose end reads before its start is 0, not 2^64 less a little (`ett qemu run` once printed
// "18446744073709.6 ms"): a playback stopped, or with nothing to write, before a time 0 still ahead.
TEST(Injector, ElapsedIsZeroWhenTheEndIsBeforeTheStart) {
  EXPECT_EQ(elapsed_ns(100, 160), 60u);
  EXPECT_EQ(elapsed_ns(160, 160), 0u);
  EXPECT_EQ(elapsed_ns(160, 100), 0u);
  EXPECT_EQ(elapsed_ns(UINT64_MAX, 0), 0u);

  auto scenario = parse_scenario("0 1 1\n1000 1 0\n", "t", ProbeLayout());
  ASSERT_TRUE(scenario.ok());
  uint8_t lines = 0;
  const uint64_t ahead = monotonic_ns() + 10'000'000'000;  // time 0 in 10 s
  const PlayResult stopped = play_scenarios(
      {PlayTarget{&*scenario, &lines}}, [] { return false; }, std::nullopt, ahead);
  EXPECT_TRUE(stopped.stopped_early);
  EXPECT_EQ(stopped.writes_done, 0u);
  EXPECT_EQ(stopped.duration_ns, 0u);
  const Scenario empty;  // a machine with nothing to play
  const PlayResult nothing = play_scenarios(
      {PlayTarget{&empty, &lines}}, [] { return true; }, std::nullopt, ahead);
  EXPECT_EQ(nothing.duration_ns, 0u);
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

// On a guest's clock with the kernel's hold: a guest whose clock runs far faster than the injector can follow
// (a host that deschedules the injector looks the same to the guest) waits at its first stop check at or
// after each write's due time plus the hold's margin, so it sees every write at most that margin and one stop
// check late on its own clock (and at most one stop check early: the injector's estimate of the guest's
// clock).
TEST(Injector, GuestWaitsAtTheHoldForALateWrite) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += std::to_string(i * 200) + " 1 " + std::to_string(i % 15 + 1) + "\n";
  auto scenario = parse_scenario(text, "t", ProbeLayout());
  ASSERT_TRUE(scenario.ok());
  constexpr uint64_t kStart = 1ull << 30;  // the guest's TSC at the capture's start (1 GHz)
  constexpr uint64_t kStep = 64'000;       // guest ticks from one stop check to the next
  uint8_t lines = 0;
  uint32_t clock_256 = 0, heartbeat = 0, hold = 0;
  std::atomic<bool> done{false};
  std::vector<std::pair<uint8_t, uint64_t>> seen;  // each new line byte and the guest time it was seen at
  std::thread guest([&] {
    uint64_t now = kStart;
    uint8_t last = 0;
    auto look = [&] {
      const uint8_t value = std::atomic_ref<uint8_t>(lines).load();
      if (value != last) seen.emplace_back(last = value, now);
    };
    while (!done.load()) {  // one stop check per round, the clock a step further each time
      // The polls between two stop checks: a kernel's clock store and heartbeat are a sliver of its round.
      for (const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
           std::chrono::steady_clock::now() < until;) {
      }
      now += kStep;
      look();
      std::atomic_ref<uint32_t>(clock_256).store(static_cast<uint32_t>(now >> 8));
      std::atomic_ref<uint32_t>(heartbeat).fetch_add(1);
      for (uint32_t h; (h = std::atomic_ref<uint32_t>(hold).load()) != 0 &&
                       static_cast<int32_t>(static_cast<uint32_t>(now >> 8) - h) >= 0 && !done.load();)
        std::this_thread::yield();
      look();
    }
    look();  // the last write may come after the guest's last round
  });
  PlayTarget target{&*scenario, &lines, nullptr, &clock_256, &heartbeat, kStart, 1'000'000'000, 0, &hold};
  const PlayResult played = play_on_guest_clocks({target}, [] { return true; });
  done = true;
  guest.join();
  EXPECT_EQ(hold, 0u);  // released at the end
  ASSERT_EQ(played.sent_per_target[0].size(), 40u);
  ASSERT_EQ(seen.size(), 40u);
  for (size_t i = 0; i < seen.size(); ++i) {
    const uint64_t due = played.origin_tsc[0] + i * 200'000;
    EXPECT_EQ(seen[i].first, i % 15 + 1);
    // Early by at most one stop check: the injector writes once its estimate of the guest's clock (the last
    // publication, extrapolated by at most one publication interval) reaches the due time.
    EXPECT_GE(seen[i].second + kStep, due) << i;
    EXPECT_LE(seen[i].second, due + 50'000 + kStep) << i;  // the hold's margin (injector.cpp) and a step
  }
}

}  // namespace
}  // namespace ett::host
