// session_stream_test.cpp: a session decoded on its own thread gives what read_session gives, a block at a
// time, and stops cleanly wherever its reader leaves it.
#include "image/session_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;
using ett::test::make_records;
using ett::test::SessionSpec;
using ett::test::TestDiskWriter;

class SessionStreamTest : public ::testing::Test {
 protected:
  // A disk with one complete session of `records` events; returns the session header's LBA.
  uint64_t write_session(size_t records) {
    ett::test::make_blank_disk(path(), 64ull << 20, "stream");
    TestDiskWriter writer(path());
    SessionSpec spec;
    spec.records = make_records(records);
    return writer.append(spec);
  }
  std::string path() { return m_dir.file("disk.img"); }

  // Every block of the stream, checked against the block limit, joined.
  static std::vector<Event> drain(SessionStream& stream, size_t* blocks = nullptr) {
    std::vector<Event> events;
    for (;;) {
      auto block = stream.next();
      EXPECT_TRUE(block) << block.error().message;
      if (!block || block->empty()) break;
      EXPECT_LE(block->size(), SessionStream::kBlockEvents);
      events.insert(events.end(), block->begin(), block->end());
      if (blocks) ++*blocks;
    }
    return events;
  }

  ett::test::TempDir m_dir;
};

TEST_F(SessionStreamTest, GivesTheEventsReadSessionGivesInBlocks) {
  // Enough for several turns of the ring of blocks, and a last block that is not full.
  const size_t records = 9 * SessionStream::kBlockEvents + 3 * f::kRecordsPerChunk + 17;
  write_session(records);
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto whole = image->read_session(0);
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->events.size(), records);

  std::vector<Event> observed;
  SessionStream stream(*image, 0, [&](std::span<const Event> block) {
    observed.insert(observed.end(), block.begin(), block.end());
  });
  size_t blocks = 0;
  const std::vector<Event> streamed = drain(stream, &blocks);
  EXPECT_EQ(blocks, 10u);
  EXPECT_TRUE(streamed == whole->events);
  EXPECT_TRUE(observed == whole->events);
  EXPECT_EQ(stream.summary().health, SessionHealth::Ok);
  EXPECT_EQ(stream.summary().recovered_events, records);
  EXPECT_EQ(stream.summary().good_chunks, whole->summary.good_chunks);
  auto after_end = stream.next();  // stays at the end
  ASSERT_TRUE(after_end);
  EXPECT_TRUE(after_end->empty());
}

TEST_F(SessionStreamTest, AnEmptySessionEndsAtOnce) {
  write_session(0);
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  SessionStream stream(*image, 0);
  EXPECT_TRUE(drain(stream).empty());
  EXPECT_EQ(stream.summary().health, SessionHealth::Ok);
}

TEST_F(SessionStreamTest, ABadChunkIsLeftOutAndReported) {
  const uint64_t header_lba = write_session(3 * SessionStream::kBlockEvents);
  {
    TestDiskWriter writer(path());
    writer.xor_byte(TestDiskWriter::chunk_lba(header_lba, 40) * f::kSectorSize + 1000, 0x04);
  }
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  auto whole = image->read_session(0);
  ASSERT_TRUE(whole.ok());
  SessionStream stream(*image, 0);
  EXPECT_TRUE(drain(stream) == whole->events);
  EXPECT_EQ(stream.summary().health, SessionHealth::Corrupt);
  EXPECT_EQ(stream.summary().describe(), whole->summary.describe());
  EXPECT_EQ(whole->events.size(), 3 * SessionStream::kBlockEvents - f::kRecordsPerChunk);
}

TEST_F(SessionStreamTest, ATruncatedImageEndsTheStreamWithItsProblem) {
  const uint64_t header_lba = write_session(2 * SessionStream::kBlockEvents);
  ASSERT_EQ(::truncate(path().c_str(),
                       static_cast<off_t>(TestDiskWriter::chunk_lba(header_lba, 50) * f::kSectorSize)),
            0);
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  SessionStream stream(*image, 0);
  EXPECT_EQ(drain(stream).size(), 50u * f::kRecordsPerChunk);
  EXPECT_EQ(stream.summary().health, SessionHealth::Truncated);
}

TEST_F(SessionStreamTest, AReaderThatLeavesEarlyStopsTheDecoder) {
  write_session(20 * SessionStream::kBlockEvents);
  auto image = TraceImage::open(path());
  ASSERT_TRUE(image.ok());
  size_t observed = 0;
  {
    SessionStream stream(*image, 0, [&](std::span<const Event> block) { observed += block.size(); });
    auto first = stream.next();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->size(), SessionStream::kBlockEvents);
    EXPECT_EQ(first->front().seq, 0u);
  }  // destroyed holding its first block: the decoder stops where the ring is full
  EXPECT_LE(observed, SessionStream::kBlocks * SessionStream::kBlockEvents);
  // A stream that was never read never starts its thread.
  SessionStream unread(*image, 0);
}

}  // namespace
}  // namespace ett::host
