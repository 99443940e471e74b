// event_packs_test.cpp: the packing of PostgreSQL's event_packs: events back as they went in (extreme seqs,
// TSCs that step back, every byte value), packs that fit a page, and damaged packs named as such.
#include "db/event_packs.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using namespace ett::host;

std::vector<EventRow> unpack_all(const std::vector<EventPack>& packs) {
  std::vector<EventRow> rows, batch;
  for (const EventPack& pack : packs) {
    const Status unpacked = unpack_events(pack.first_seq, pack.last_seq, pack.events, pack.data, batch,
                                          [&](std::span<const EventRow> full) -> Status {
                                            EXPECT_EQ(full.size(), kEventBatchRows);
                                            rows.insert(rows.end(), full.begin(), full.end());
                                            return {};
                                          });
    EXPECT_TRUE(unpacked) << unpacked.error().message;
  }
  rows.insert(rows.end(), batch.begin(), batch.end());
  return rows;
}

std::vector<EventPack> pack(const std::vector<Event>& events) {
  EventPacker packer;
  for (const Event& event : events) packer.add(event);
  packer.finish();
  return packer.take();
}

TEST(EventPacks, EventsComeBackAsTheyWentInAndEveryPackFitsAPage) {
  std::mt19937_64 random(7);
  std::vector<Event> events;
  uint64_t seq = 5, tsc = 1'000'000;
  for (int i = 0; i < 50'000; ++i) {
    Event event;
    // Mostly the next seq and a small TSC step, as a capture stamps them; now and then a gap of seqs, a TSC
    // that steps back (a corrupt record), or one at the ends of its range.
    seq += (i % 997 == 0) ? 1 + random() % 100'000 : 1;
    const uint64_t pick = random() % 1000;
    tsc = pick == 0 ? 0 : pick == 1 ? UINT64_MAX : pick == 2 ? tsc - 12345 : tsc + random() % 70'000;
    event.seq = seq;
    event.tsc = tsc;
    event.probe = static_cast<uint8_t>(random());
    event.code = static_cast<uint8_t>(random());
    event.lines = static_cast<uint8_t>(random());
    events.push_back(event);
  }
  // The last ones take the longest varints: a seq step of almost 2^64, then a TSC step of 2^63 (2^64 - 1
  // after zigzag).
  events.push_back({UINT64_MAX - 1, 0, 255, 255, 255, 0, 0});
  events.push_back({UINT64_MAX, uint64_t{1} << 63, 0, 0, 0, 0, 0});
  const std::vector<EventPack> packs = pack(events);
  ASSERT_GT(packs.size(), 10u);
  uint64_t total = 0;
  for (size_t i = 0; i < packs.size(); ++i) {
    EXPECT_LE(packs[i].data.size(), kPackBytes) << i;
    total += packs[i].events;
    if (i + 1 == packs.size()) break;
    // Closed when the next event might not fit.
    EXPECT_GT(packs[i].data.size() + kMostPackedEventBytes, kPackBytes) << i;
    EXPECT_LT(packs[i].last_seq, packs[i + 1].first_seq) << i;
  }
  EXPECT_EQ(total, events.size());
  EXPECT_EQ(packs.front().first_seq, events.front().seq);
  EXPECT_EQ(packs.back().last_seq, UINT64_MAX);
  const std::vector<EventRow> rows = unpack_all(packs);
  ASSERT_EQ(rows.size(), events.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].seq, events[i].seq) << i;
    ASSERT_EQ(rows[i].tsc, events[i].tsc) << i;
    ASSERT_EQ(rows[i].probe, events[i].probe) << i;
    ASSERT_EQ(rows[i].code, events[i].code) << i;
    ASSERT_EQ(rows[i].lines, events[i].lines) << i;
    ASSERT_FALSE(rows[i].has_time_ns) << i;
  }
}

TEST(EventPacks, ACaptureLikeTracePacksIntoAboutSevenBytesAnEvent) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < 100'000; ++i)
    events.push_back({i, 4'000'000'000 + i * 30'000, static_cast<uint8_t>(1 + i % 2),
                      static_cast<uint8_t>(i % 16), static_cast<uint8_t>(i), 0, 0});
  const std::vector<EventPack> packs = pack(events);
  size_t bytes = 0;
  for (const EventPack& p : packs) bytes += p.data.size();
  // 1 byte of seq step, 3 of TSC step (60,000 after zigzag), 3 of probe, code and lines; each pack's first
  // TSC (4-7 * 10^9, 33-34 bits after zigzag) takes 5 bytes.
  EXPECT_EQ(bytes, 7 * events.size() + 2 * packs.size());
}

TEST(EventPacks, ADamagedPackSaysWhatIsWrongWithIt) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < 100; ++i) events.push_back({10 + i, 1000 * i, 1, 2, 3, 0, 0});
  const EventPack good = pack(events).at(0);
  auto error = [](uint64_t first, uint64_t last, uint64_t count, const std::string& data) {
    std::vector<EventRow> batch;
    const Status unpacked = unpack_events(first, last, count, data, batch,
                                          [](std::span<const EventRow>) -> Status { return {}; });
    return unpacked ? std::string("no error") : unpacked.error().message;
  };
  EXPECT_EQ(error(good.first_seq, good.last_seq, good.events, good.data), "no error");
  // The first event takes 5 bytes (steps 0 and 0), the others 6 (a TSC step of 1000: 2 bytes).
  ASSERT_EQ(good.data.size(), 5u + 99 * 6);
  EXPECT_EQ(error(10, 109, 100, good.data.substr(0, 300)),
            "the pack of seqs 10-109: its data ends inside event 51 of 100");
  EXPECT_EQ(error(10, 109, 99, good.data),
            "the pack of seqs 10-109: its data goes on after its 99 events (6 bytes)");
  EXPECT_EQ(error(10, 110, 100, good.data), "the pack of seqs 10-110: its last event has seq 109");
  EXPECT_EQ(error(10, 109, 100, good.data + "x"),
            "the pack of seqs 10-109: its data goes on after its 100 events (1 bytes)");
  std::string repeated = good.data;
  repeated[good.data.find('\x03') + 1] = '\0';  // event 2's seq step: 0, the seq of event 1 again
  EXPECT_EQ(error(10, 109, 100, repeated),
            "the pack of seqs 10-109: the seq of event 2 does not rise from the one before");
  // A varint that runs past 64 bits.
  EXPECT_EQ(error(10, 10, 1, std::string(11, '\xff')),
            "the pack of seqs 10-10: its data ends inside event 1 of 1");
}

TEST(EventPacks, TheSinksErrorStopsTheUnpacking) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < 3 * kEventBatchRows; ++i) events.push_back({i, i, 1, 1, 1, 0, 0});
  const std::vector<EventPack> packs = pack(events);
  std::vector<EventRow> batch;
  int calls = 0;
  Status unpacked;
  for (const EventPack& p : packs) {
    unpacked = unpack_events(p.first_seq, p.last_seq, p.events, p.data, batch,
                             [&](std::span<const EventRow>) -> Status {
                               ++calls;
                               return make_error(ErrorKind::Usage, "enough");
                             });
    if (!unpacked) break;
  }
  ASSERT_FALSE(unpacked);
  EXPECT_EQ(unpacked.error().message, "enough");
  EXPECT_EQ(calls, 1);
}

}  // namespace
