// engine_logic_test.cpp: issue 3's pure capture logic on the host: trit patterns, trigger with the
// pre-trigger ring, filter, each stop rule, calibrate and hwlat, against a scripted probe and a fake clock.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "capture/capture_loop.h"
#include "capture/pretrigger_ring.h"
#include "capture/stop_rules.h"
#include "capture/trit_pattern.h"

namespace ett::capture {
namespace {

using format::EventRecord;
using format::Layout;
using format::StopReason;

// One byte per poll, then the last byte forever; the clock advances 10 ticks per read.
struct Script {
  std::vector<uint8_t> bytes;
  size_t reads = 0;
  uint8_t read() { return reads < bytes.size() ? bytes[reads++] : (++reads, bytes.back()); }
};
struct Source {
  Script* script;
  uint8_t read() const { return script->read(); }
};
struct Clock {
  const Script* script;
  uint64_t now() const { return 1000 + 10 * script->reads; }
};
struct Host {
  const Script* script;
  size_t stop_after = SIZE_MAX;
  void capture_started(uint64_t) {}
  bool stop_requested() const { return script->reads >= stop_after; }
};
struct Keys {
  const Script* script;
  size_t press_at = SIZE_MAX;
  bool new_key_press() const { return script->reads >= press_at; }
};

struct Out {
  CaptureResult result;
  std::vector<EventRecord> events;
};

struct Ev {
  int probe, code;
  bool operator==(const Ev&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Ev& e) {
  return o << "(" << e.probe << "," << e.code << ")";
}

std::vector<Ev> pairs(const std::vector<EventRecord>& events) {
  std::vector<Ev> out;
  for (const auto& e : events) out.push_back({e.probe, e.code});
  return out;
}

template <Layout kLayout, bool kFiltered = false>
Out run(const std::vector<uint8_t>& bytes, const CaptureOptions& options, size_t capacity = 1000,
        size_t stop_after = 5000, uint64_t limit_ticks = 0, size_t key_at = SIZE_MAX) {
  Script script{bytes};
  Clock clock{&script};
  Host host{&script, stop_after};
  Keys keys{&script, key_at};
  StopRules<Clock, Host, Keys> stop(clock, host, limit_ticks, key_at == SIZE_MAX ? nullptr : &keys);
  std::vector<EventRecord> storage(capacity);
  Out out;
  out.result = run_capture<kLayout, kFiltered>(Source{&script}, clock, stop,
                                               EventBuffer(storage.data(), capacity), options);
  out.events.assign(storage.begin(), storage.begin() + out.result.event_count);
  return out;
}

TEST(KernelTrits, ParseMaskAndMatch) {
  TritPattern p;
  ASSERT_EQ(parse_trits("1X0XXXXX", 8, true, p), TritError::None);
  EXPECT_EQ(p.mask, 0xA0);
  EXPECT_EQ(p.match, 0x80);
  EXPECT_TRUE(p.matches(0x80));
  EXPECT_TRUE(p.matches(0x9F));
  EXPECT_FALSE(p.matches(0xA0));  // D5 must be low
  EXPECT_FALSE(p.matches(0x00));  // D7 must be high
  EXPECT_EQ(parse_trits("1X0XXXX", 7, true, p), TritError::Length);
  EXPECT_EQ(parse_trits("1X0XXXX?", 8, true, p), TritError::Character);
  EXPECT_EQ(parse_trits("XXXX0111", 8, false, p), TritError::Character);
  ASSERT_EQ(parse_trits("xxxx1111", 8, false, p), TritError::None);
  EXPECT_EQ(p.mask, 0x0F);
}

TEST(KernelPretriggerRing, KeepsTheLastNInOrder) {
  for (size_t pushed : {0u, 2u, 5u, 7u, 13u}) {
    std::vector<EventRecord> storage(5);
    PretriggerRing ring(storage.data(), 5);
    for (size_t i = 0; i < pushed; ++i) ring.push(i, 1, static_cast<uint8_t>(i), 0);
    const size_t kept = ring.linearize();
    ASSERT_EQ(kept, std::min<size_t>(pushed, 5));
    for (size_t i = 0; i < kept; ++i) EXPECT_EQ(storage[i].code, pushed - kept + i) << pushed << " pushed";
  }
}

TEST(KernelTrigger, RecordingStartsAtTheMatchingChange) {
  CaptureOptions options;
  options.trigger_enabled = true;
  options.trigger = {0xF0, 0xA0};  // 1010XXXX
  // 2x4: the matching change is read 4; its own events are the first ones.
  auto out = run<Layout::Double2x4>({0x00, 0x01, 0x02, 0x32, 0xA3, 0xA4, 0x54}, options);
  EXPECT_TRUE(out.result.triggered);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 3}, {2, 10}, {1, 4}, {2, 5}}));
  EXPECT_EQ(out.result.start_tsc, out.events[0].tsc) << "time 0 is the trigger";
  EXPECT_LT(out.result.armed_tsc, out.result.start_tsc);
  EXPECT_EQ(out.result.pretrigger_events, 0u);
}

TEST(KernelTrigger, PretriggerRingKeepsTheLastEventsBeforeIt) {
  CaptureOptions options;
  options.trigger_enabled = true;
  options.trigger = {0xF0, 0xA0};
  options.pretrigger = 2;
  auto out = run<Layout::Double2x4>({0x00, 0x01, 0x02, 0x32, 0xA2, 0xA4}, options);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 2}, {2, 3}, {2, 10}, {1, 4}}));
  EXPECT_EQ(out.result.pretrigger_events, 2u);
  EXPECT_LT(out.events[1].tsc, out.result.start_tsc);
}

TEST(KernelTrigger, MatchingFromTheStartTriggersAtOnce) {
  CaptureOptions options;
  options.trigger_enabled = true;
  options.trigger = {0x01, 0x01};
  auto out = run<Layout::Byte1x8>({0x01, 0x03}, options);
  EXPECT_TRUE(out.result.triggered);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 3}}));
}

TEST(KernelTrigger, NeverMatchedKeepsTheRingAndSaysSo) {
  CaptureOptions options;
  options.trigger_enabled = true;
  options.trigger = {0x80, 0x80};
  options.pretrigger = 10;
  auto out = run<Layout::Byte1x8>({0x00, 0x01, 0x02}, options, 1000, 3000);
  EXPECT_FALSE(out.result.triggered);
  EXPECT_EQ(out.result.stop_reason, StopReason::HostRequest);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 1}, {1, 2}}));
}

TEST(KernelFilter, OnlyLinesMarkedOneGiveEvents) {
  CaptureOptions options;
  options.filter_mask = 0x0B;  // D0, D1, D3
  // 8x1: changes on D2 and D7 alone give nothing; the recorded lines byte is the full one.
  auto out = run<Layout::Single8x1, true>({0x00, 0x04, 0x84, 0x85, 0x87, 0x8F, 0x0F}, options);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 1}, {2, 1}, {4, 1}}));
  EXPECT_EQ(out.events[0].lines, 0x85);
}

TEST(KernelStopRules, ZeroCodeStopsAfterTheWholePoll) {
  CaptureOptions options;
  options.event_stop = EventStop::zero_code();
  // Both probes change in the stopping poll: both events are kept, then the capture stops.
  auto out = run<Layout::Double2x4>({0x11, 0x22, 0x03, 0x44}, options);
  EXPECT_EQ(out.result.stop_reason, StopReason::ZeroCode);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 2}, {2, 2}, {1, 3}, {2, 0}}));
}

TEST(KernelStopRules, CodeMatchOnlyOnItsProbe) {
  CaptureOptions options;
  options.event_stop = EventStop::code_on_probe(2, 9);
  auto out = run<Layout::Double2x4>({0x00, 0x09, 0x19, 0x99, 0x98}, options);
  EXPECT_EQ(out.result.stop_reason, StopReason::CodeMatch);
  EXPECT_EQ(pairs(out.events), (std::vector<Ev>{{1, 9}, {2, 1}, {2, 9}}));
}

TEST(KernelStopRules, DeadlineAndBufferFullAndHost) {
  EXPECT_EQ(run<Layout::Byte1x8>({0, 1}, {}, 1000, SIZE_MAX, 20'000).result.stop_reason,
            StopReason::Deadline);
  auto full = run<Layout::Byte1x8>({0, 1, 2, 3, 4}, {}, 3);
  EXPECT_EQ(full.result.stop_reason, StopReason::BufferFull);
  EXPECT_EQ(full.events.size(), 3u);
  EXPECT_EQ(run<Layout::Byte1x8>({0, 1}, {}, 1000, 2000).result.stop_reason, StopReason::HostRequest);
}

TEST(KernelStopRules, KeyboardIsCheckedAtTheStopCheck) {
  auto out = run<Layout::Byte1x8>({0, 1}, {}, 1000, SIZE_MAX, 0, 1500);
  EXPECT_EQ(out.result.stop_reason, StopReason::Keyboard);
  EXPECT_EQ(out.result.iterations, 2048u) << "noticed at the first stop check after the key";
}

TEST(KernelCalibrate, OneRecordPerStepWithItsLength) {
  Script script{{5, 6, 7}};
  Clock clock{&script};
  Host host{&script};
  StopRules<Clock, Host> stop(clock, host, 0);
  std::vector<EventRecord> storage(100);
  auto r = run_calibrate(Source{&script}, clock, stop, EventBuffer(storage.data(), 100));
  EXPECT_EQ(r.stop_reason, StopReason::BufferFull);
  ASSERT_EQ(r.event_count, 100u);
  EXPECT_EQ(storage[0].code, 6);
  EXPECT_EQ(storage[1].code, 7);
  for (size_t i = 1; i < 100; ++i) {
    EXPECT_EQ(storage[i].aux, storage[i].tsc - storage[i - 1].tsc);
    EXPECT_EQ(storage[i].aux, 10u);
  }
}

// A clock that jumps at given reads: hwlat records exactly those gaps.
struct JumpyClock {
  uint64_t* t;
  size_t* reads;
  uint64_t now() const {
    ++*reads;
    *t += (*reads == 100 || *reads == 3000) ? 5000 : 3;
    return *t;
  }
};
struct ReadsHost {
  size_t* reads;
  void capture_started(uint64_t) {}
  bool stop_requested() const { return *reads > 4000; }
};

TEST(KernelHwlat, RecordsGapsAboveTheThresholdOnly) {
  uint64_t t = 0;
  size_t reads = 0;
  JumpyClock clock{&t, &reads};
  ReadsHost host{&reads};
  StopRules<JumpyClock, ReadsHost> stop(clock, host, 0);
  std::vector<EventRecord> storage(100);
  auto r = run_hwlat(clock, stop, EventBuffer(storage.data(), 100), 1000);
  EXPECT_EQ(r.stop_reason, StopReason::HostRequest);
  ASSERT_EQ(r.event_count, 2u);
  EXPECT_EQ(storage[0].aux, 5000u);
  EXPECT_EQ(storage[1].aux, 5000u);
}

}  // namespace
}  // namespace ett::capture
