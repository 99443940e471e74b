// event_source_test.cpp: a load's events through feeds: a session scanned once and then fed whole or as two
// halves read at once gives what read_session gives; a cut is where the halves meet; an image that changed
// since the scan, and a feed that does not start or end at a cut, end in an error.
#include "image/event_source.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "image/session_stream.h"
#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;
using ett::test::make_records;
using ett::test::SessionSpec;
using ett::test::TestDiskWriter;

// Every block of `feed`, joined; the error that ended it, if one did.
struct Drained {
  std::vector<Event> events;
  std::string error;
  size_t largest_block = 0;
};
Drained drain(const EventFeed& feed) {
  Drained out;
  for (;;) {
    auto block = feed();
    if (!block) {
      out.error = block.error().message;
      break;
    }
    if (block->empty()) break;
    out.largest_block = std::max(out.largest_block, block->size());
    out.events.insert(out.events.end(), block->begin(), block->end());
  }
  return out;
}

class SessionEventsTest : public ::testing::Test {
 protected:
  // A disk with one session as `spec` says; returns the session header's LBA.
  uint64_t write_session(const SessionSpec& spec, const std::string& name = "disk.img") {
    ett::test::make_blank_disk(m_dir.file(name), 64ull << 20, "source");
    TestDiskWriter writer(m_dir.file(name));
    return writer.append(spec);
  }
  static SessionSpec complete(size_t records) {
    SessionSpec spec;
    spec.records = make_records(records);
    return spec;
  }
  std::string path() { return m_dir.file("disk.img"); }

  ett::test::TempDir m_dir;
};

TEST_F(SessionEventsTest, FeedsTheWholeSessionOrItsTwoHalvesAtOnce) {
  const size_t records = 9 * SessionStream::kBlockEvents + 3 * f::kRecordsPerChunk + 17;
  write_session(complete(records));
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto whole = image->read_session(0);
  ASSERT_TRUE(whole.ok());

  SessionEvents source(*image, 0);
  std::vector<Event> scanned;
  ASSERT_TRUE(source.scan(
      [&](std::span<const Event> events) { scanned.insert(scanned.end(), events.begin(), events.end()); }));
  EXPECT_TRUE(scanned == whole->events);
  EXPECT_EQ(source.size(), records);
  EXPECT_EQ(source.summary().health, SessionHealth::Ok);
  EXPECT_EQ(source.summary().describe(), whole->summary.describe());

  const Drained all = drain(source.feed(0, source.size()));
  EXPECT_EQ(all.error, "");
  EXPECT_TRUE(all.events == whole->events);
  EXPECT_LE(all.largest_block, SessionStream::kBlockEvents);

  // The cut: the first chunk of the second half of the session's chunks.
  const uint64_t chunks = f::chunks_for(records);
  const auto cut = source.middle();
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->seq, chunks / 2 * f::kRecordsPerChunk);
  EXPECT_EQ(cut->index, cut->seq);
  Drained first, second;
  {
    const EventFeed feeds[] = {source.feed(0, cut->index), source.feed(cut->index, source.size())};
    std::thread other([&] { second = drain(feeds[1]); });
    first = drain(feeds[0]);
    other.join();
  }
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(second.error, "");
  ASSERT_EQ(first.events.size(), cut->index);
  ASSERT_FALSE(second.events.empty());
  EXPECT_EQ(second.events.front().seq, cut->seq);
  first.events.insert(first.events.end(), second.events.begin(), second.events.end());
  EXPECT_TRUE(first.events == whole->events);
}

TEST_F(SessionEventsTest, AChunkMissingBeforeTheMiddleMovesTheCutByItsEvents) {
  SessionSpec spec = complete(40 * f::kRecordsPerChunk + 5);
  spec.status = f::SessionStatus::Writing;  // cut off: its good chunks are what it holds
  spec.skip_chunk.assign(41, false);
  spec.skip_chunk[3] = true;
  write_session(spec);
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  auto whole = image->read_session(0);
  ASSERT_TRUE(whole.ok());
  SessionEvents source(*image, 0);
  ASSERT_TRUE(source.scan({}));
  EXPECT_EQ(source.summary().health, SessionHealth::Partial);
  EXPECT_EQ(source.size(), 40u * f::kRecordsPerChunk + 5 - f::kRecordsPerChunk);
  const auto cut = source.middle();
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->seq, 20u * f::kRecordsPerChunk);
  EXPECT_EQ(cut->index, 19u * f::kRecordsPerChunk);
  Drained first = drain(source.feed(0, cut->index));
  const Drained second = drain(source.feed(cut->index, source.size()));
  EXPECT_EQ(first.error + second.error, "");
  EXPECT_EQ(second.events.front().seq, cut->seq);
  first.events.insert(first.events.end(), second.events.begin(), second.events.end());
  EXPECT_TRUE(first.events == whole->events);
}

TEST_F(SessionEventsTest, AFeedOfAnImageChangedSinceTheScanEndsInAnError) {
  const uint64_t header_lba = write_session(complete(30 * f::kRecordsPerChunk));
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  SessionEvents source(*image, 0);
  ASSERT_TRUE(source.scan({}));
  const auto cut = source.middle();
  ASSERT_TRUE(cut);
  {
    TestDiskWriter writer(path());
    writer.xor_byte(TestDiskWriter::chunk_lba(header_lba, 22) * f::kSectorSize + 1000, 0x04);
  }
  const Drained first = drain(source.feed(0, cut->index));
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(first.events.size(), cut->index);
  const Drained second = drain(source.feed(cut->index, source.size()));
  EXPECT_NE(second.error.find("session 1 changed while it was read"), std::string::npos) << second.error;
  const Drained all = drain(source.feed(0, source.size()));
  EXPECT_NE(all.error.find("changed while it was read"), std::string::npos) << all.error;
}

TEST_F(SessionEventsTest, FeedsStartAndEndOnlyAtTheEndsAndTheCut) {
  write_session(complete(10 * f::kRecordsPerChunk));
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  SessionEvents source(*image, 0);
  ASSERT_TRUE(source.scan({}));
  for (auto [begin, end] : {std::pair<uint64_t, uint64_t>{1, source.size()}, {0, 7}, {source.size(), 0}}) {
    const Drained fed = drain(source.feed(begin, end));
    EXPECT_NE(fed.error.find("cannot be fed from event " + std::to_string(begin)), std::string::npos)
        << fed.error;
  }
  // One chunk: nothing to cut.
  write_session(complete(f::kRecordsPerChunk), "small.img");
  auto small = TraceImage::open(m_dir.file("small.img"));
  ASSERT_TRUE(small.ok());
  SessionEvents one(*small, 0);
  ASSERT_TRUE(one.scan({}));
  EXPECT_FALSE(one.middle());
  EXPECT_EQ(drain(one.feed(0, one.size())).events.size(), f::kRecordsPerChunk);
}

TEST(EventSpanTest, CutsRisingSeqsInTheMiddleAndFeedsSlices) {
  std::vector<Event> events(3 * EventSpan::kSliceEvents + 11);
  for (size_t i = 0; i < events.size(); ++i) events[i] = Event{2 * i + 5, 1000 + i, 1, 2, 3, 0, 0};
  const EventSpan span(events);
  const auto cut = span.middle();
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->index, events.size() / 2);
  EXPECT_EQ(cut->seq, events[events.size() / 2].seq);
  Drained first = drain(span.feed(0, cut->index));
  const Drained second = drain(span.feed(cut->index, span.size()));
  EXPECT_EQ(first.largest_block, EventSpan::kSliceEvents);
  first.events.insert(first.events.end(), second.events.begin(), second.events.end());
  EXPECT_TRUE(first.events == events);
  EXPECT_NE(drain(span.feed(5, 3)).error, "");

  std::swap(events[100], events[101]);  // seqs that do not rise cannot be cut
  EXPECT_FALSE(EventSpan(events).middle());
  EXPECT_FALSE(EventSpan(std::span(events).first(1)).middle());
}

}  // namespace
}  // namespace ett::host
