// stall_log_test.cpp: the stall log the stop check keeps: typical and longest interval, the threshold, stalls
// recorded as the interval that held them, the merge on overflow, and StopRules feeding it.
#include "capture/stall_log.h"

#include <gtest/gtest.h>

#include <vector>

#include "capture/stop_rules.h"

namespace {

using ett::capture::Stall;
using ett::capture::StallLog;

// Checks at the given times after begin(0).
StallLog checked_at(const std::vector<uint64_t>& times, uint64_t seed, uint64_t floor) {
  StallLog log;
  log.begin(0, seed, floor);
  for (uint64_t t : times) log.note(t);
  return log;
}

TEST(KernelStallLog, AnIntervalLongerThanFourTypicalOnesIsAStallCoveredByItsWindow) {
  // Typical 1000 ticks; one interval of 9000 (a stall of ~8000 somewhere in it); floor below the typical.
  const StallLog log = checked_at({1000, 2000, 3000, 12000, 13000}, 1000, 100);
  EXPECT_EQ(log.typical_interval(), 1000u);
  EXPECT_EQ(log.threshold(), 4000u);
  EXPECT_EQ(log.longest_interval(), 9000u);
  EXPECT_EQ(log.intervals(), 5u);
  ASSERT_EQ(log.count(), 1u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log.records()[0].start_tsc, 3000u);
  EXPECT_EQ(log.records()[0].length_ticks, 9000u);
  EXPECT_EQ(log.longest_stall(), 9000u);
}

TEST(KernelStallLog, IntervalsUpToTheThresholdAreNotStalls) {
  const StallLog log = checked_at({1000, 5000, 6000}, 1000, 100);  // 4000 = 4 x typical: not above it
  EXPECT_EQ(log.count(), 0u);
  EXPECT_EQ(log.longest_interval(), 4000u);
}

TEST(KernelStallLog, TheFloorKeepsShortIntervalsJitterFromCounting) {
  // Typical 100 ticks, floor 1000: an interval of 900 (9x typical) is below the floor.
  const StallLog log = checked_at({100, 200, 1100, 1200, 2300}, 100, 1000);
  EXPECT_EQ(log.threshold(), 1000u);
  ASSERT_EQ(log.count(), 1u);
  EXPECT_EQ(log.records()[0].start_tsc, 1200u);
  EXPECT_EQ(log.records()[0].length_ticks, 1100u);
}

TEST(KernelStallLog, TheSeedCatchesAStallInTheFirstInterval) {
  const StallLog seeded = checked_at({50000, 51000, 52000}, 1000, 100);
  ASSERT_EQ(seeded.count(), 1u);
  EXPECT_EQ(seeded.records()[0].start_tsc, 0u);
  EXPECT_EQ(seeded.records()[0].length_ticks, 50000u);
  // Without a seed the first interval is the typical one until a shorter one comes: it cannot be a stall.
  const StallLog unseeded = checked_at({50000, 51000, 52000}, 0, 100);
  EXPECT_EQ(unseeded.count(), 0u);
  EXPECT_EQ(unseeded.typical_interval(), 1000u);
}

TEST(KernelStallLog, ATypicalIntervalShorterThanTheSeedLowersTheThreshold) {
  const StallLog log = checked_at({800, 1600, 5000}, 2000, 100);  // 3400 > 4 x 800 = 3200
  EXPECT_EQ(log.typical_interval(), 800u);
  EXPECT_EQ(log.count(), 1u);
}

TEST(KernelStallLog, TheTimeAfterTheLastCheckIsCheckedAtTheEnd) {
  StallLog log = checked_at({1000, 2000}, 1000, 100);
  log.finish(2500);  // a partial interval, normal
  EXPECT_EQ(log.count(), 0u);
  log.finish(20000);
  ASSERT_EQ(log.count(), 1u);
  EXPECT_EQ(log.records()[0].start_tsc, 2500u);
  EXPECT_EQ(log.records()[0].length_ticks, 17500u);
  EXPECT_EQ(log.longest_interval(), 17500u);
}

TEST(KernelStallLog, WhenFullTheClosestNeighboursMergeAndEveryStallStaysCovered) {
  StallLog log;
  log.begin(0, 1000, 100);
  // Stalls of 10000 ticks; the gaps between them grow, except one short gap after stall 5.
  std::vector<Stall> stalls;
  uint64_t t = 0;
  for (uint32_t i = 0; i < StallLog::kCapacity + 3; ++i) {
    t += 1000;
    log.note(t);  // a normal interval
    const uint64_t gap = i == 5 ? 0 : 1000 * (i + 2);
    for (uint64_t g = 1000; g < gap; g += 1000) {
      t += 1000;
      log.note(t);
    }
    stalls.push_back(Stall{t, 10000});
    t += 10000;
    log.note(t);
  }
  EXPECT_EQ(log.count(), StallLog::kCapacity + 3);
  EXPECT_EQ(log.size(), StallLog::kCapacity);
  EXPECT_EQ(log.longest_stall(), 10000u);
  // Every stall lies inside one record; records are in order and do not overlap.
  for (const Stall& stall : stalls) {
    int covering = 0;
    for (uint32_t r = 0; r < log.size(); ++r) {
      const Stall& record = log.records()[r];
      if (stall.start_tsc >= record.start_tsc &&
          stall.start_tsc + stall.length_ticks <= record.start_tsc + record.length_ticks)
        ++covering;
    }
    EXPECT_EQ(covering, 1) << "stall at " << stall.start_tsc;
  }
  for (uint32_t r = 0; r + 1 < log.size(); ++r)
    EXPECT_LE(log.records()[r].start_tsc + log.records()[r].length_ticks, log.records()[r + 1].start_tsc);
  // The closest neighbours were merged: stalls 4 and 5 (one normal interval apart) first, then 0, 1 and 2.
  auto record_from = [&](uint64_t start) {
    for (uint32_t r = 0; r < log.size(); ++r)
      if (log.records()[r].start_tsc == start) return log.records()[r];
    return Stall{0, 0};
  };
  EXPECT_EQ(record_from(stalls[4].start_tsc).length_ticks, stalls[5].start_tsc + 10000 - stalls[4].start_tsc);
  EXPECT_EQ(record_from(stalls[0].start_tsc).length_ticks, stalls[2].start_tsc + 10000 - stalls[0].start_tsc);
  EXPECT_EQ(record_from(stalls[3].start_tsc).length_ticks, 10000u);
}

// StopRules reads the clock at every check and feeds the log from begin() on.
TEST(KernelStallLog, StopRulesKeepTheCheckIntervals) {
  struct Clock {
    uint64_t t = 0;
    uint64_t now() const { return t; }
  };
  struct Host {
    void capture_started(uint64_t) {}
    bool stop_requested() const { return false; }
  };
  Clock clock;
  Host host;
  ett::capture::StopRules<Clock, Host> rules(clock, host, 0);
  rules.set_stall_reference(1000, 500);
  clock.t = 100;
  rules.begin(100);
  for (uint64_t at : {1100u, 2100u, 40000u, 41000u}) {
    clock.t = at;
    EXPECT_EQ(rules.check(), ett::format::StopReason::None);
  }
  ASSERT_EQ(rules.stalls().count(), 1u);
  EXPECT_EQ(rules.stalls().records()[0].start_tsc, 2100u);
  EXPECT_EQ(rules.stalls().records()[0].length_ticks, 37900u);
  EXPECT_EQ(rules.stalls().longest_interval(), 37900u);
}

}  // namespace
