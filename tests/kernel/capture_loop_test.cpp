// capture_loop_test.cpp: the hot loop (kernel/capture) against a scripted probe and a fake clock, per layout.
#include "capture/capture_loop.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "capture/stop_rules.h"

namespace ett::capture {
namespace {

using format::EventRecord;
using format::Layout;
using format::StopReason;

// Plays a byte sequence, one byte per poll; holds the last byte once the script is over.
struct ScriptedProbe {
  std::vector<uint8_t> bytes;
  size_t polls = 0;  // reads so far, the initial read included

  uint8_t read() {
    const uint8_t value = polls < bytes.size() ? bytes[polls] : bytes.back();
    ++polls;
    return value;
  }
};

// The loop's Source: a handle on the script.
struct ScriptedSource {
  ScriptedProbe* probe;
  uint8_t read() const { return probe->read(); }
};

// Time advances 10 ticks per poll, so an event's timestamp tells which read saw it.
constexpr uint64_t kTimeZero = 1'000'000;
constexpr uint64_t kTicksPerPoll = 10;
uint64_t time_after_reads(size_t reads) {
  return kTimeZero + kTicksPerPoll * reads;
}

struct FakeClock {
  const ScriptedProbe* probe;
  uint64_t now() const { return time_after_reads(probe->polls); }
};

// Asks to stop after `stop_after_polls` reads; remembers when the capture was announced.
struct FakeHost {
  const ScriptedProbe* probe;
  size_t stop_after_polls = SIZE_MAX;
  bool started = false;
  size_t polls_at_start = 0;
  uint64_t start_tsc = 0;

  void capture_started(uint64_t tsc) {
    started = true;
    polls_at_start = probe->polls;
    start_tsc = tsc;
  }
  bool stop_requested() const { return probe->polls >= stop_after_polls; }
};

struct CaptureRun {
  CaptureResult result;
  std::vector<EventRecord> events;
  FakeHost host;
};

template <Layout kLayout>
CaptureRun run_script(const std::vector<uint8_t>& bytes, size_t capacity, size_t stop_after_polls,
                      uint64_t limit_ticks = 0) {
  ScriptedProbe probe{bytes};
  FakeClock clock{&probe};
  FakeHost host{&probe, stop_after_polls};
  StopRules<FakeClock, FakeHost> stop(clock, host, limit_ticks);
  std::vector<EventRecord> storage(capacity + 1);
  storage[capacity] = EventRecord{0xDEADBEEF, 0xEE, 0xEE, 0xEE, 0xEE, 0xEEEEEEEE};  // must stay untouched
  const CaptureResult result =
      run_capture<kLayout>(ScriptedSource{&probe}, clock, stop, EventBuffer(storage.data(), capacity));
  EXPECT_EQ(storage[capacity].tsc, 0xDEADBEEFu) << "wrote past the buffer";
  storage.resize(result.event_count);
  return {result, storage, host};
}

// The events the loop must produce for `bytes`, computed the slow, obvious way.
std::vector<EventRecord> expected_events(Layout layout, const std::vector<uint8_t>& bytes) {
  const format::LineSplit split = format::line_split(layout);
  std::vector<EventRecord> events;
  for (size_t i = 1; i < bytes.size(); ++i) {
    for (uint32_t k = 0; k < split.probe_count; ++k) {
      const uint8_t before = split.code(k, bytes[i - 1]);
      const uint8_t after = split.code(k, bytes[i]);
      if (before != after)
        events.push_back({time_after_reads(i + 1), static_cast<uint8_t>(k + 1), after, bytes[i], 0, 0});
    }
  }
  return events;
}

void expect_same_events(const std::vector<EventRecord>& actual, const std::vector<EventRecord>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(actual[i].tsc, expected[i].tsc);
    EXPECT_EQ(actual[i].probe, expected[i].probe);
    EXPECT_EQ(actual[i].code, expected[i].code);
    EXPECT_EQ(actual[i].lines, expected[i].lines);
    EXPECT_EQ(actual[i].flags, 0);
    EXPECT_EQ(actual[i].aux, 0u);
  }
}

// A script that exercises every line, alone and in groups, with runs of idle polls in between.
std::vector<uint8_t> busy_script() {
  std::vector<uint8_t> bytes = {0x00};
  const uint8_t values[] = {0x01, 0x03, 0x13, 0xF3, 0xFF, 0x00, 0x80, 0x81, 0x7E, 0xA5, 0x5A, 0x5A, 0x00,
                            0x10, 0x11, 0xC3, 0x3C, 0xFF, 0xFE, 0xFC, 0xF8, 0xF0, 0xE0, 0xC0, 0x80, 0x00};
  for (uint8_t value : values) {
    bytes.push_back(value);
    bytes.insert(bytes.end(), 3, value);  // idle polls
  }
  return bytes;
}

// Every behaviour below holds for each layout: each gets its own instantiation of the loop.
template <Layout kValue>
struct LayoutTag {
  static constexpr Layout kLayout = kValue;
};

template <typename Tag>
class KernelCaptureLoopPerLayout : public ::testing::Test {};

using AllLayouts = ::testing::Types<LayoutTag<Layout::Double2x4>, LayoutTag<Layout::Single8x1>,
                                    LayoutTag<Layout::Quad4x2>, LayoutTag<Layout::Byte1x8>>;
TYPED_TEST_SUITE(KernelCaptureLoopPerLayout, AllLayouts);

TYPED_TEST(KernelCaptureLoopPerLayout, MatchesTheReference) {
  constexpr Layout kLayout = TypeParam::kLayout;
  const std::vector<uint8_t> bytes = busy_script();
  const CaptureRun run = run_script<kLayout>(bytes, 1000, 4096);  // the script is long over by then
  expect_same_events(run.events, expected_events(kLayout, bytes));
  EXPECT_EQ(run.result.initial_lines, 0x00);
  EXPECT_EQ(run.result.final_lines, 0x00);
}

TYPED_TEST(KernelCaptureLoopPerLayout, ProbesChangingTogetherShareOneTimestampInProbeOrder) {
  constexpr Layout kLayout = TypeParam::kLayout;
  const format::LineSplit split = format::line_split(kLayout);
  const CaptureRun run = run_script<kLayout>({0x00, 0x00, 0xFF, 0xFF}, 16, 1);
  ASSERT_EQ(run.events.size(), split.probe_count);
  for (uint32_t k = 0; k < split.probe_count; ++k) {
    EXPECT_EQ(run.events[k].probe, k + 1);
    EXPECT_EQ(run.events[k].code, split.code_mask());
    EXPECT_EQ(run.events[k].lines, 0xFF);
    EXPECT_EQ(run.events[k].tsc, time_after_reads(3));  // taken after the read that saw the change
  }
}

TYPED_TEST(KernelCaptureLoopPerLayout, InitialLinesAreReturnedNotRecorded) {
  const CaptureRun run = run_script<TypeParam::kLayout>({0xA5, 0xA5, 0xA5}, 16, 1);
  EXPECT_TRUE(run.events.empty());
  EXPECT_EQ(run.result.initial_lines, 0xA5);
  EXPECT_EQ(run.result.final_lines, 0xA5);
  EXPECT_TRUE(run.host.started);
  EXPECT_EQ(run.host.polls_at_start, 1u);  // the host hears of the capture after the initial read
  EXPECT_EQ(run.host.start_tsc, run.result.start_tsc);
  EXPECT_EQ(run.result.start_tsc, time_after_reads(1));
}

TYPED_TEST(KernelCaptureLoopPerLayout, BufferFullStopsAtExactlyCapacity) {
  constexpr Layout kLayout = TypeParam::kLayout;
  const std::vector<uint8_t> bytes = busy_script();
  const std::vector<EventRecord> all = expected_events(kLayout, bytes);
  ASSERT_GT(all.size(), 20u);
  for (size_t capacity : {1u, 2u, 3u, 7u, 20u}) {
    SCOPED_TRACE(capacity);
    const CaptureRun run = run_script<kLayout>(bytes, capacity, SIZE_MAX);
    EXPECT_EQ(run.result.stop_reason, StopReason::BufferFull);
    EXPECT_EQ(run.result.event_count, capacity);
    expect_same_events(run.events, std::vector<EventRecord>(all.begin(), all.begin() + capacity));
    EXPECT_EQ(run.result.end_tsc, run.events.back().tsc);  // stops at once, no further polls
  }
}

TYPED_TEST(KernelCaptureLoopPerLayout, StopRequestIsSeenAtTheNextCheck) {
  const CaptureRun run = run_script<TypeParam::kLayout>({0x00, 0x01, 0x03}, 16, 3000);
  EXPECT_EQ(run.result.stop_reason, StopReason::HostRequest);
  EXPECT_EQ(run.result.iterations, 3072u);  // checks run every 1024 polls
  EXPECT_EQ(run.result.final_lines, 0x03);
  EXPECT_EQ(run.result.end_tsc, time_after_reads(3073));
  expect_same_events(run.events, expected_events(TypeParam::kLayout, {0x00, 0x01, 0x03}));
}

TYPED_TEST(KernelCaptureLoopPerLayout, DeadlineStopsTheCapture) {
  const uint64_t limit = 50'000;  // 5000 polls of the fake clock
  const CaptureRun run = run_script<TypeParam::kLayout>({0x00, 0x01}, 16, SIZE_MAX, limit);
  EXPECT_EQ(run.result.stop_reason, StopReason::Deadline);
  EXPECT_GE(run.result.end_tsc - run.result.start_tsc, limit);
  EXPECT_EQ(run.result.iterations, 5120u);
  EXPECT_EQ(run.result.event_count, 1u);
}

TEST(KernelCaptureLoop, BothNibblesChangingGiveTwoEventsWithOneTimestampInProbeOrder) {
  const CaptureRun run = run_script<Layout::Double2x4>({0x00, 0x00, 0x5A, 0x5A}, 16, 1);
  ASSERT_EQ(run.events.size(), 2u);
  EXPECT_EQ(run.events[0].probe, 1);
  EXPECT_EQ(run.events[0].code, 0xA);
  EXPECT_EQ(run.events[1].probe, 2);
  EXPECT_EQ(run.events[1].code, 0x5);
  EXPECT_EQ(run.events[0].tsc, run.events[1].tsc);
  EXPECT_EQ(run.events[0].tsc, time_after_reads(3));  // taken after the third read, the one that saw 0x5A
  EXPECT_EQ(run.events[0].lines, 0x5A);
  EXPECT_EQ(run.events[1].lines, 0x5A);
}

TEST(KernelCaptureLoop, OneProbeChangingGivesOneEvent) {
  const CaptureRun run = run_script<Layout::Double2x4>({0x21, 0x31}, 16, 1);
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].probe, 2);
  EXPECT_EQ(run.events[0].code, 3);
  EXPECT_EQ(run.events[0].lines, 0x31);
}

TEST(KernelCaptureLoop, BufferFillingInsideOneChangeKeepsProbeOrder) {
  // 0x00 -> 0x11 changes probes 1 and 2; room for one event: probe 1 is kept.
  const CaptureRun run = run_script<Layout::Double2x4>({0x00, 0x11}, 1, SIZE_MAX);
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].probe, 1);
  EXPECT_EQ(run.result.stop_reason, StopReason::BufferFull);
  EXPECT_EQ(run.result.final_lines, 0x11);
}

TEST(KernelCaptureLoop, ZeroCapacityStopsBeforePolling) {
  const CaptureRun run = run_script<Layout::Double2x4>({0x00, 0x11}, 0, SIZE_MAX);
  EXPECT_EQ(run.result.stop_reason, StopReason::BufferFull);
  EXPECT_EQ(run.result.event_count, 0u);
  EXPECT_EQ(run.result.iterations, 0u);
}

TEST(KernelCaptureLoop, HostRequestWinsOverDeadlineAtTheSameCheck) {
  const CaptureRun run = run_script<Layout::Double2x4>({0x00}, 16, 1000, 5000);
  EXPECT_EQ(run.result.stop_reason, StopReason::HostRequest);
  EXPECT_EQ(run.result.iterations, 1024u);
}

TEST(KernelCaptureLoop, IterationsCountEveryPoll) {
  const std::vector<uint8_t> bytes = {0x00, 0x01};
  const CaptureRun run = run_script<Layout::Double2x4>(bytes, 1, SIZE_MAX);
  EXPECT_EQ(run.result.iterations, 1u);  // the initial read is not an iteration
}

TEST(KernelStopRules, NoLimitMeansNoDeadline) {
  struct Clock {
    uint64_t now() const { return UINT64_MAX - 1; }
  } clock;
  struct Host {
    void capture_started(uint64_t) {}
    bool stop_requested() const { return false; }
  } host;
  StopRules<Clock, Host> rules(clock, host, 0);
  rules.begin(100);
  EXPECT_EQ(rules.check(), StopReason::None);
}

}  // namespace
}  // namespace ett::capture
