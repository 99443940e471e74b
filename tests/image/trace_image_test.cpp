// trace_image_test.cpp: the image reader against disks made by disk_maker and filled by the test-side writer.
#include "image/trace_image.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "ett/crc32c.h"
#include "image/disk_maker.h"
#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;
using ett::test::make_records;
using ett::test::SessionSpec;
using ett::test::TestDiskWriter;

class TraceImageTest : public ::testing::Test {
 protected:
  std::string make(uint64_t size = 8ull << 20) {
    const std::string path = m_dir.file("disk.img");
    ett::test::make_blank_disk(path, size, "unit");
    return path;
  }
  ett::test::TempDir m_dir;
};

void expect_events_equal(const std::vector<Event>& events, const std::vector<f::EventRecord>& records,
                         uint64_t first_seq = 0) {
  ASSERT_EQ(events.size(), records.size());
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(events[i].seq, first_seq + i);
    EXPECT_EQ(events[i].tsc, records[i].tsc);
    EXPECT_EQ(events[i].probe, records[i].probe);
    EXPECT_EQ(events[i].code, records[i].code);
    EXPECT_EQ(events[i].lines, records[i].lines);
    EXPECT_EQ(events[i].flags, records[i].flags);
    EXPECT_EQ(events[i].aux, records[i].aux);
  }
}

TEST_F(TraceImageTest, RoundTripsSessionsOfEverySize) {
  const std::string path = make();
  const std::vector<size_t> sizes = {0, 1, f::kRecordsPerChunk, f::kRecordsPerChunk + 1,
                                     3 * f::kRecordsPerChunk + 17};
  std::vector<std::vector<f::EventRecord>> written;
  {
    TestDiskWriter writer(path);
    for (size_t size : sizes) {
      written.push_back(make_records(size, 5'000'000 * (written.size() + 1)));
      SessionSpec spec;
      spec.records = written.back();
      writer.append(spec);
    }
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->disk_name(), "unit");
  EXPECT_TRUE(image->chain_problem().empty());
  EXPECT_TRUE(image->size_warning().empty());
  ASSERT_EQ(image->sessions().size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE(sizes[i]);
    EXPECT_EQ(image->sessions()[i].session_number, i + 1);
    auto data = image->read_session(i);
    ASSERT_TRUE(data.ok()) << data.error().message;
    EXPECT_EQ(data->summary.health, SessionHealth::Ok) << data->summary.describe();
    EXPECT_EQ(data->summary.recovered_events, sizes[i]);
    EXPECT_EQ(data->summary.describe(), "ok");
    expect_events_equal(data->events, written[i]);
    EXPECT_TRUE(require_usable(path, data->summary).ok());
  }
  auto newest = image->find_session(std::nullopt);
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(*newest, sizes.size() - 1);
  auto second = image->find_session(2);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, 1u);
  auto missing = image->find_session(9);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::NoSuchSession);
  EXPECT_NE(missing.error().message.find("no session 9"), std::string::npos);
}

// Session format version 1 (before the stall table: chunks right after the header) is still read, next to
// version 2 sessions on the same disk; version 2 brings its stall table and check intervals.
TEST_F(TraceImageTest, OldVersionSessionsAreReadNextToNewOnesWithTheirStallTable) {
  const std::string path = make();
  const auto old_records = make_records(f::kRecordsPerChunk + 5, 2'000'000);
  const auto new_records = make_records(100, 9'000'000);
  const std::vector<f::StallRecord> stalls = {{9'010'000, 120'000'000}, {9'030'000, 70'000}};
  {
    TestDiskWriter writer(path);
    SessionSpec old_spec;
    old_spec.records = old_records;
    old_spec.format_version = 1;
    const uint64_t old_lba = writer.append(old_spec);
    f::SessionHeader old_header;
    writer.read_at(&old_header, sizeof(old_header), old_lba * f::kSectorSize);
    EXPECT_EQ(old_header.format_version, 1u);
    EXPECT_EQ(old_header.reserved_sectors, 1 + 2 * f::kChunkSectors);
    SessionSpec new_spec;
    new_spec.records = new_records;
    new_spec.stalls = stalls;
    new_spec.typical_check_ticks = 30'000;
    new_spec.longest_check_ticks = 120'000'000;
    new_spec.stall_threshold_ticks = 120'000;
    writer.append(new_spec);
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok()) << image.error().message;
  ASSERT_EQ(image->sessions().size(), 2u);
  auto old_data = image->read_session(0);
  ASSERT_TRUE(old_data.ok()) << old_data.error().message;
  EXPECT_EQ(old_data->summary.describe(), "ok");
  expect_events_equal(old_data->events, old_records);
  EXPECT_TRUE(old_data->summary.stalls.empty());
  EXPECT_EQ(old_data->summary.header.typical_check_ticks, 0u);

  auto new_data = image->read_session(1);
  ASSERT_TRUE(new_data.ok()) << new_data.error().message;
  EXPECT_EQ(new_data->summary.describe(), "ok");
  expect_events_equal(new_data->events, new_records);
  const f::SessionHeader& h = new_data->summary.header;
  EXPECT_EQ(h.format_version, f::kSessionFormatVersion);
  EXPECT_EQ(h.stall_count, 2u);
  EXPECT_EQ(h.stall_records, 2u);
  EXPECT_EQ(h.longest_stall_ticks, 120'000'000u);
  EXPECT_EQ(h.typical_check_ticks, 30'000u);
  ASSERT_EQ(new_data->summary.stalls.size(), 2u);
  EXPECT_EQ(new_data->summary.stalls[0].start_tsc, 9'010'000u);
  EXPECT_EQ(new_data->summary.stalls[0].length_ticks, 120'000'000u);
  EXPECT_EQ(new_data->summary.stalls[1].length_ticks, 70'000u);
}

// A changed byte anywhere in the stall table fails its CRC: the session is corrupt and says why.
TEST_F(TraceImageTest, DamagedStallTableIsCorrupt) {
  const std::string path = make();
  uint64_t lba = 0;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    const auto records = make_records(10);
    spec.records = records;
    spec.stalls = {{1'000'500, 50'000}};
    spec.typical_check_ticks = 3'000;
    lba = writer.append(spec);
    writer.xor_byte((lba + 1) * f::kSectorSize + 3 * f::kSectorSize + 17, 0x01);  // in the zero padding
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto summary = image->check_session(0);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->health, SessionHealth::Corrupt);
  EXPECT_NE(summary->describe().find("stall table: bad CRC"), std::string::npos) << summary->describe();
  EXPECT_FALSE(require_usable(path, *summary).ok());
}

TEST_F(TraceImageTest, EveryFlippedByteOfTheNewestSessionHeaderIsDetected) {
  const std::string path = make();
  uint64_t header_lba;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(10);
    writer.append(spec);
    header_lba = writer.append(spec);
  }
  TestDiskWriter writer(path);
  for (uint64_t byte = 0; byte < f::kSectorSize; ++byte) {
    SCOPED_TRACE(byte);
    const uint64_t offset = header_lba * f::kSectorSize + byte;
    writer.xor_byte(offset, 0x01);
    auto image = TraceImage::open(path);
    ASSERT_TRUE(image.ok()) << image.error().message;
    EXPECT_FALSE(image->chain_problem().empty());
    auto newest = image->find_session(std::nullopt);
    ASSERT_FALSE(newest.ok()) << "a damaged newest header went unnoticed";
    EXPECT_EQ(newest.error().kind, ErrorKind::BadCrc);
    EXPECT_TRUE(image->find_session(1).ok());  // the session before it stays readable
    writer.xor_byte(offset, 0x01);
  }
  auto repaired = TraceImage::open(path);
  ASSERT_TRUE(repaired.ok());
  EXPECT_EQ(repaired->sessions().size(), 2u);
}

TEST_F(TraceImageTest, EveryFlippedByteOfTheOnlySessionHeaderIsDetected) {
  const std::string path = make();
  uint64_t header_lba;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(0);  // no chunks follow: the header alone must give itself away
    header_lba = writer.append(spec);
  }
  TestDiskWriter writer(path);
  for (uint64_t byte = 0; byte < f::kSectorSize; ++byte) {
    SCOPED_TRACE(byte);
    writer.xor_byte(header_lba * f::kSectorSize + byte, 0xFF);
    auto image = TraceImage::open(path);
    ASSERT_TRUE(image.ok()) << image.error().message;
    auto newest = image->find_session(std::nullopt);
    ASSERT_FALSE(newest.ok());
    EXPECT_EQ(newest.error().kind, ErrorKind::BadCrc) << newest.error().message;
    writer.xor_byte(header_lba * f::kSectorSize + byte, 0xFF);
  }
}

TEST_F(TraceImageTest, EveryFlippedByteOfAChunkIsDetected) {
  const std::string path = make();
  uint64_t header_lba;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(f::kRecordsPerChunk + 100);  // chunk 1 is part records, part zero padding
    header_lba = writer.append(spec);
  }
  TestDiskWriter writer(path);
  const uint64_t chunk_offset = TestDiskWriter::chunk_lba(header_lba, 1) * f::kSectorSize;
  for (uint64_t byte = 0; byte < f::kChunkBytes; ++byte) {
    writer.xor_byte(chunk_offset + byte, 0x80);
    auto image = TraceImage::open(path);
    ASSERT_TRUE(image.ok()) << image.error().message;
    auto summary = image->check_session(0);
    ASSERT_TRUE(summary.ok());
    ASSERT_EQ(summary->health, SessionHealth::Corrupt) << "byte " << byte;
    ASSERT_EQ(summary->problems.size(), 1u);
    ASSERT_EQ(summary->problems[0].chunk_index, 1u) << "byte " << byte;
    writer.xor_byte(chunk_offset + byte, 0x80);
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  writer.xor_byte(chunk_offset + 1000, 0x04);
  auto data = image->read_session(0);
  ASSERT_TRUE(data.ok());
  auto usable = require_usable(path, data->summary);
  ASSERT_FALSE(usable.ok());
  EXPECT_EQ(usable.error().kind, ErrorKind::BadCrc);
  EXPECT_NE(usable.error().message.find("chunk 1 (LBA "), std::string::npos) << usable.error().message;
  EXPECT_NE(usable.error().message.find("bad CRC"), std::string::npos) << usable.error().message;
}

TEST_F(TraceImageTest, ChunkFromAnotherSessionOrPlaceIsCorrupt) {
  const std::string path = make();
  uint64_t first, second;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(5);
    first = writer.append(spec);
    second = writer.append(spec);
  }
  // Copy session 1's chunk over session 2's: its CRC is fine, its session number is not.
  TestDiskWriter writer(path);
  std::vector<uint8_t> chunk(f::kChunkBytes);
  writer.read_at(chunk.data(), chunk.size(), TestDiskWriter::chunk_lba(first, 0) * f::kSectorSize);
  writer.write_at(chunk.data(), chunk.size(), TestDiskWriter::chunk_lba(second, 0) * f::kSectorSize);
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  auto summary = image->check_session(1);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->health, SessionHealth::Corrupt);
  EXPECT_EQ(summary->describe(), fmt::format("corrupt: chunk 0 (LBA {}): belongs to session 1",
                                             TestDiskWriter::chunk_lba(second, 0)));
}

TEST_F(TraceImageTest, TruncatedImages) {
  const std::string path = make();
  uint64_t lba;
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(3 * f::kRecordsPerChunk);
    lba = writer.append(spec);
  }
  // Cut inside the last chunk.
  const uint64_t cut = TestDiskWriter::chunk_lba(lba, 2) * f::kSectorSize + 4096;
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_FALSE(image->size_warning().empty());
  auto data = image->read_session(0);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->summary.health, SessionHealth::Truncated);
  auto usable = require_usable(path, data->summary);
  ASSERT_FALSE(usable.ok());
  EXPECT_EQ(usable.error().kind, ErrorKind::Truncated);
  EXPECT_NE(usable.error().message.find("image truncated"), std::string::npos) << usable.error().message;

  // Cut inside the label.
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  auto tiny = TraceImage::open(path);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().kind, ErrorKind::Truncated);
  EXPECT_NE(tiny.error().message.find("truncated"), std::string::npos);
}

TEST_F(TraceImageTest, NotATraceDisk) {
  const std::string path = m_dir.file("zeros.img");
  ASSERT_EQ(::close(::creat(path.c_str(), 0644)), 0);
  auto empty = TraceImage::open(path);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::NotTraceDisk);

  ASSERT_EQ(::truncate(path.c_str(), 1 << 20), 0);
  auto zeros = TraceImage::open(path);
  ASSERT_FALSE(zeros.ok());
  EXPECT_EQ(zeros.error().kind, ErrorKind::NotTraceDisk);
  EXPECT_NE(zeros.error().message.find("not a trace disk"), std::string::npos);
  EXPECT_NE(zeros.error().message.find(path), std::string::npos);

  auto missing = TraceImage::open(m_dir.file("missing.img"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
}

TEST_F(TraceImageTest, UnknownVersionAndDamagedLabel) {
  const std::string path = make();
  {
    TestDiskWriter writer(path);
    f::DiskLabel label = writer.label();
    label.format_version = 2;
    label.crc = ett::crc32c(&label, f::kSectorSize - 4);
    writer.write_at(&label, sizeof(label), 0);
  }
  auto future = TraceImage::open(path);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.error().kind, ErrorKind::UnknownVersion);
  EXPECT_NE(future.error().message.find("unknown trace format version 2"), std::string::npos);

  const std::string other = m_dir.file("other.img");
  MakeDiskOptions options;
  options.path = other;
  ASSERT_TRUE(make_disk(options).ok());
  TestDiskWriter writer(other);
  writer.xor_byte(offsetof(f::DiskLabel, name) + 3, 0x20);
  auto damaged = TraceImage::open(other);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().kind, ErrorKind::BadCrc);
  EXPECT_NE(damaged.error().message.find("bad CRC in the disk label"), std::string::npos);
}

TEST_F(TraceImageTest, EmptyDisk) {
  const std::string path = make();
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  EXPECT_TRUE(image->sessions().empty());
  auto newest = image->find_session(std::nullopt);
  ASSERT_FALSE(newest.ok());
  EXPECT_EQ(newest.error().kind, ErrorKind::EmptyDisk);
  EXPECT_NE(newest.error().message.find("no sessions"), std::string::npos);
}

TEST_F(TraceImageTest, HeaderFromAnEarlierLabelEndsTheChain) {
  const std::string path = make();
  uint8_t stranger[16] = {1, 2, 3};
  {
    TestDiskWriter writer(path);
    SessionSpec spec;
    spec.records = make_records(4);
    spec.uuid_override = stranger;
    writer.append(spec);
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  EXPECT_TRUE(image->sessions().empty());
  EXPECT_TRUE(image->chain_problem().empty());
}

TEST_F(TraceImageTest, PartialSessionRecoversTheWrittenChunks) {
  const std::string path = make();
  const auto records = make_records(4 * f::kRecordsPerChunk - 10);
  {
    TestDiskWriter writer(path);
    SessionSpec complete;
    complete.records = make_records(3);
    writer.append(complete);
    SessionSpec cut;
    cut.records = records;
    cut.status = f::SessionStatus::Writing;
    cut.skip_chunk = {false, false, true, true};  // power lost after two chunks
    writer.append(cut);
  }
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  ASSERT_EQ(image->sessions().size(), 2u);
  auto data = image->read_session(1);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->summary.health, SessionHealth::Partial);
  EXPECT_EQ(data->summary.expected_events, records.size());
  EXPECT_EQ(data->summary.recovered_events, 2 * f::kRecordsPerChunk);
  EXPECT_EQ(data->summary.good_chunks, 2u);
  EXPECT_TRUE(require_usable(path, data->summary).ok());
  EXPECT_TRUE(data->summary.describe().starts_with(
      fmt::format("partial: {} of {} events recovered", 2 * f::kRecordsPerChunk, records.size())))
      << data->summary.describe();
  expect_events_equal(
      data->events, std::vector<f::EventRecord>(records.begin(), records.begin() + 2 * f::kRecordsPerChunk));
}

TEST_F(TraceImageTest, PartialSessionSkipsABadChunkAndKeepsSequenceNumbers) {
  const std::string path = make();
  const auto records = make_records(3 * f::kRecordsPerChunk);
  uint64_t lba;
  {
    TestDiskWriter writer(path);
    SessionSpec cut;
    cut.records = records;
    cut.status = f::SessionStatus::Writing;
    lba = writer.append(cut);
  }
  TestDiskWriter writer(path);
  writer.xor_byte(TestDiskWriter::chunk_lba(lba, 1) * f::kSectorSize + 777, 0xFF);
  auto image = TraceImage::open(path);
  ASSERT_TRUE(image.ok());
  auto data = image->read_session(0);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->summary.health, SessionHealth::Partial);
  EXPECT_EQ(data->summary.recovered_events, 2 * f::kRecordsPerChunk);
  ASSERT_EQ(data->events.size(), 2 * f::kRecordsPerChunk);
  EXPECT_EQ(data->events[f::kRecordsPerChunk - 1].seq, f::kRecordsPerChunk - 1);
  EXPECT_EQ(data->events[f::kRecordsPerChunk].seq, 2 * f::kRecordsPerChunk);  // chunk 1 is missing
  EXPECT_EQ(data->events[f::kRecordsPerChunk].tsc, records[2 * f::kRecordsPerChunk].tsc);
}

}  // namespace
}  // namespace ett::host
