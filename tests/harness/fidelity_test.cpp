// fidelity_test.cpp: pairing captured events with sent ones on made-up runs: loss, duplicates, reordering,
// simultaneous changes, several writes in one poll, the offset estimate and sends after the capture's end.
#include "harness/fidelity.h"

#include <gtest/gtest.h>

namespace ett::host {
namespace {

// The guest's TSC runs kOffset ticks behind the host's; 1 tick = 1 ns.
constexpr int64_t kOffset = 1'000'000;
constexpr uint64_t kHz = 1'000'000'000;

struct Send {
  uint64_t host_tsc;  // before the store; the rdtsc after it reads 20 ticks later
  uint8_t probe;
  uint8_t code;
};

std::vector<SentEvent> sends(const std::vector<Send>& list) {
  std::vector<SentEvent> sent;
  for (size_t i = 0; i < list.size(); ++i)
    sent.push_back(
        SentEvent{i, list[i].probe, list[i].code, 0, 0, 0, list[i].host_tsc + 20, list[i].host_tsc});
  return sent;
}

// A captured event stamped `latency` ticks after the host time `host_tsc`.
Event seen(uint64_t seq, uint64_t host_tsc, uint64_t latency, uint8_t probe, uint8_t code) {
  Event event;
  event.seq = seq;
  event.tsc = host_tsc + latency - kOffset;
  event.probe = probe;
  event.code = code;
  return event;
}

FidelityReport assess(const std::vector<SentEvent>& sent, const std::vector<Event>& captured,
                      uint64_t end_tsc = 0) {
  return assess_fidelity(sent, captured, CaptureWindow{kHz, end_tsc});
}

TEST(Fidelity, CompleteRunMeasuresLatencyFromTheFastestDetection) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 2, 5}, {30'000, 1, 4}, {40'000, 2, 6}});
  // Latencies 50, 20, 1020, 80: the fastest (20) becomes 0, the others keep their differences.
  std::vector<Event> captured = {seen(0, 10'000, 50, 1, 3), seen(1, 20'000, 20, 2, 5),
                                 seen(2, 30'000, 1020, 1, 4), seen(3, 40'000, 80, 2, 6)};
  auto r = assess(sent, captured);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.sent, 4u);
  EXPECT_EQ(r.captured, 4u);
  EXPECT_EQ(r.matched, 4u);
  EXPECT_EQ(r.offset_ticks, kOffset - 20);
  EXPECT_EQ(r.latencies_ns, (std::vector<double>{30, 0, 1000, 60}));
  EXPECT_EQ(r.latency_p50_ns, 30);
  EXPECT_EQ(r.latency_p99_ns, 1000);
  EXPECT_EQ(r.latency_max_ns, 1000);
  EXPECT_NE(format_fidelity(r).find("complete and in order"), std::string::npos);
  const auto json = nlohmann::json::parse(fidelity_json(r));
  EXPECT_EQ(json.at("lost"), 0);
  EXPECT_EQ(json.at("latency_max_ns"), 1000.0);
  EXPECT_EQ(json.at("clean"), true);
}

// Two writes on one probe inside one poll: the poll sees only the second; the first is lost.
TEST(Fidelity, WritesMergedInOnePollAreLost) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 1, 4}, {20'010, 1, 5}, {30'000, 1, 6}});
  std::vector<Event> captured = {seen(0, 10'000, 10, 1, 3), seen(1, 20'010, 30, 1, 5),
                                 seen(2, 30'000, 10, 1, 6)};
  auto r = assess(sent, captured);
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.unexpected, 0u);
  EXPECT_EQ(r.out_of_order, 0u);
  EXPECT_EQ(r.matched, 3u);
  EXPECT_FALSE(r.clean());
  EXPECT_NE(format_fidelity(r).find("lost 1"), std::string::npos);
}

// A 1-bit probe going 0 -> 1 -> 0 inside one poll leaves no trace: both are lost, and the later events are
// still paired with their own writes (by time), not shifted onto the lost ones (by code).
TEST(Fidelity, PulseInsideOnePollLosesBothEdgesWithoutShiftingTheRest) {
  auto sent =
      sends({{10'000, 1, 1}, {20'000, 1, 0}, {30'000, 1, 1}, {30'005, 1, 0}, {40'000, 1, 1}, {50'000, 1, 0}});
  std::vector<Event> captured = {seen(0, 10'000, 10, 1, 1), seen(1, 20'000, 10, 1, 0),
                                 seen(2, 40'000, 10, 1, 1), seen(3, 50'000, 10, 1, 0)};
  auto r = assess(sent, captured);
  EXPECT_EQ(r.lost, 2u);
  EXPECT_EQ(r.unexpected, 0u);
  EXPECT_EQ(r.out_of_order, 0u);
  EXPECT_EQ(r.latency_max_ns, 0) << "every captured event kept its own write";
}

TEST(Fidelity, DuplicateAndInventedEventsAreUnexpected) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 2, 5}, {30'000, 1, 4}});
  std::vector<Event> captured = {seen(0, 10'000, 10, 1, 3), seen(1, 10'000, 10, 1, 3),  // recorded twice
                                 seen(2, 20'000, 10, 2, 5), seen(3, 25'000, 10, 2, 9),  // never sent
                                 seen(4, 30'000, 10, 1, 4)};
  auto r = assess(sent, captured);
  EXPECT_EQ(r.unexpected, 2u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.matched, 3u);
  EXPECT_FALSE(r.clean());
}

// Probe 2's write came first, but the capture lists probe 1 first: out of order.
TEST(Fidelity, ReorderedEventsAreCounted) {
  auto sent = sends({{10'000, 2, 5}, {10'400, 1, 3}, {20'000, 1, 4}});
  std::vector<Event> captured = {seen(0, 10'400, 10, 1, 3), seen(1, 10'000, 420, 2, 5),
                                 seen(2, 20'000, 10, 1, 4)};
  auto r = assess(sent, captured);
  EXPECT_EQ(r.out_of_order, 1u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.unexpected, 0u);
}

// One write changing several probes gives one event per probe with one stamp, in probe order: not out of
// order, not merged, even though the scenario listed them the other way round.
TEST(Fidelity, SimultaneousChangesOnSeveralProbesAreOneWrite) {
  auto sent = sends({{10'000, 3, 1}, {10'000, 1, 1}, {10'000, 2, 1}, {20'000, 2, 0}, {20'000, 1, 0}});
  std::vector<Event> captured = {seen(0, 10'000, 10, 1, 1), seen(1, 10'000, 10, 2, 1),
                                 seen(2, 10'000, 10, 3, 1), seen(3, 20'000, 10, 1, 0),
                                 seen(4, 20'000, 10, 2, 0)};
  auto r = assess(sent, captured);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.merged, 0u);
  EXPECT_EQ(r.matched, 5u);
}

// Two writes on different probes inside one poll: both seen, with one stamp, in probe order. The one whose
// write came second but whose probe comes first is out of order; both are counted as merged into one poll.
TEST(Fidelity, SeveralWritesInOnePollShareAStamp) {
  auto sent = sends({{10'000, 2, 7}, {10'005, 1, 2}, {20'000, 1, 3}});
  const uint64_t poll = 10'015;
  std::vector<Event> captured = {seen(0, poll, 0, 1, 2), seen(1, poll, 0, 2, 7), seen(2, 20'000, 15, 1, 3)};
  auto r = assess(sent, captured);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.merged, 1u);
  EXPECT_EQ(r.out_of_order, 1u);
}

// Writes after the kernel had stopped (a stop= rule, limit=) are neither sent nor lost.
TEST(Fidelity, SendsAfterTheCaptureEndedAreNotLost) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 1, 0}, {30'000, 1, 4}, {40'000, 1, 5}});
  std::vector<Event> captured = {seen(0, 10'000, 10, 1, 3), seen(1, 20'000, 10, 1, 0)};
  auto r = assess(sent, captured, /*end_tsc=*/20'000 + 10 + 100 - kOffset);
  EXPECT_EQ(r.after_end, 2u);
  EXPECT_EQ(r.sent, 2u);
  EXPECT_TRUE(r.clean());
}

TEST(Fidelity, NothingCapturedIsAllLost) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 1, 4}});
  auto r = assess(sent, {});
  EXPECT_EQ(r.lost, 2u);
  EXPECT_EQ(r.matched, 0u);
  EXPECT_EQ(r.latency_max_ns, 0);
  EXPECT_FALSE(r.clean());
}

// Bursts whose codes repeat (1..3 over and over) where each poll saw only a burst's last write: pairing by
// codes alone takes the first send with the code, far too early. With the runner's upper bound on the offset
// (+-1 ms here), every capture is paired with the last write of its burst.
TEST(Fidelity, MergedBurstsArePairedThroughTheOffsetBound) {
  std::vector<Send> list;
  std::vector<Event> captured;
  uint8_t code = 0;
  for (uint64_t burst = 0; burst < 3; ++burst) {
    const uint64_t begin = 100'000 + burst * 10'000'000;
    for (uint64_t i = 0; i < 1000; ++i) {
      code = static_cast<uint8_t>(code % 3 + 1);
      list.push_back({begin + i * 50, 1, code});
    }
    captured.push_back(seen(burst, begin + 999 * 50, 40 + burst, 1, code));
  }
  auto sent = sends(list);
  CaptureWindow window{kHz, 0, std::pair<int64_t, int64_t>{kOffset - 1'000'000, kOffset + 1'000'000}};
  auto r = assess_fidelity(sent, captured, window);
  EXPECT_EQ(r.matched, 3u);
  EXPECT_EQ(r.unexpected, 0u);
  EXPECT_EQ(r.lost, 2997u);
  EXPECT_EQ(r.offset_ticks, kOffset - 40);
  EXPECT_EQ(r.latencies_ns, (std::vector<double>{0, 1, 2}));
}

// Guest clock: every send carries the guest's own clock (due, and published before the store), the stamps
// are on that clock, the offset is 0. Intervals and schedule are compared with the scenario's.
TEST(Fidelity, GuestClockRunComparesEveryIntervalWithTheScenario) {
  std::vector<SentEvent> sent;
  // Scheduled 0, 100, 200, 300 us; the guest's clock starts at 5,000,000 ticks (1 tick = 1 ns).
  const std::vector<uint64_t> scheduled = {0, 100'000, 200'000, 300'000};
  for (size_t i = 0; i < scheduled.size(); ++i) {
    SentEvent send{i, 1, static_cast<uint8_t>(i + 1), 0, scheduled[i], 0, 0, 0};
    send.guest_tsc_due = 5'000'000 + scheduled[i];
    send.guest_tsc_before = send.guest_tsc_due - 3'000;  // published 3 us before the write went out
    sent.push_back(send);
  }
  // Seen 100 ns, 100 ns, 2,100 ns and 100 ns after their due times.
  const std::vector<uint64_t> late = {100, 100, 2'100, 100};
  std::vector<Event> captured;
  for (size_t i = 0; i < sent.size(); ++i) {
    Event event;
    event.seq = i;
    event.tsc = sent[i].guest_tsc_due + late[i];
    event.probe = 1;
    event.code = static_cast<uint8_t>(i + 1);
    captured.push_back(event);
  }
  CaptureWindow window{kHz, 0};
  window.guest_clock = true;
  auto r = assess_fidelity(sent, captured, window);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.offset_ticks, 0);
  EXPECT_EQ(r.latencies_ns, (std::vector<double>{3'100, 3'100, 5'100, 3'100}));
  // Intervals: 100 us (error 0), 102 us (2 us), 98 us (2 us).
  EXPECT_EQ(r.interval_p50_ns, 2'000);
  EXPECT_EQ(r.interval_max_ns, 2'000);
  // Stamp - scheduled: 5,000,100 thrice and 5,002,100 once: the odd one is 2 us off the median.
  EXPECT_EQ(r.schedule_max_ns, 2'000);
  EXPECT_TRUE(r.on_time(2'000));
  EXPECT_FALSE(r.on_time(1'999));
  EXPECT_NE(format_fidelity(r).find("interval error"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(fidelity_json(r)).at("interval_error_max_ns"), 2000.0);
}

// A burst scheduled 50 ns apart but held back by pacing: each event complete and in order, yet the captured
// timeline spreads far past the scenario's, and the held-back writes are counted.
TEST(Fidelity, HeldBackBurstIsCompleteButOffTheSchedule) {
  std::vector<SentEvent> sent;
  std::vector<Event> captured;
  for (size_t i = 0; i < 1000; ++i) {
    SentEvent send{i, 1, static_cast<uint8_t>(i % 15 + 1), 0, i * 50, 0, 0, 0};
    send.guest_tsc_due = 1'000'000 + i * 50;
    send.guest_tsc_before = 1'000'000 + i * 50'000;  // each write waited for two stop checks
    send.held_back = i > 0;
    send.held_ns = i * 50'000 - i * 50;
    sent.push_back(send);
    Event event;
    event.seq = i;
    event.tsc = send.guest_tsc_before + 30;
    event.probe = 1;
    event.code = send.code;
    captured.push_back(event);
  }
  CaptureWindow window{kHz, 0};
  window.guest_clock = true;
  auto r = assess_fidelity(sent, captured, window);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.held_back, 999u);
  EXPECT_EQ(r.held_back_max_ns, 999 * 50'000 - 999 * 50);
  EXPECT_NEAR(r.interval_p50_ns, 49'950, 1);
  EXPECT_GT(r.schedule_max_ns, 20'000'000);  // half the 50 ms spread
  EXPECT_FALSE(r.on_time(kDefaultToleranceUs * 1e3));
  EXPECT_NE(format_fidelity(r).find("held back by pacing"), std::string::npos);
}

// Nothing captured: no latency and no timing error was measured, so the JSON says null, not 0.
TEST(Fidelity, JsonSaysNullForWhatWasNotMeasured) {
  auto sent = sends({{10'000, 1, 3}, {20'000, 1, 4}});
  auto r = assess(sent, {});
  EXPECT_EQ(r.lost, 2u);
  const auto json = nlohmann::json::parse(fidelity_json(r));
  EXPECT_EQ(json.at("sent"), 2);
  EXPECT_EQ(json.at("matched"), 0);
  EXPECT_EQ(json.at("clean"), false);
  for (const char* key :
       {"latency_p50_ns", "latency_max_ns", "interval_error_max_ns", "schedule_error_p95_ns"})
    EXPECT_TRUE(json.at(key).is_null()) << key;
}

}  // namespace
}  // namespace ett::host
