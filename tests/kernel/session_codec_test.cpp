// session_codec_test.cpp: label checks, the session chain walk and chunk bytes
// (kernel/include/ett/session_codec.h), against a trace disk held in memory.
#include "ett/session_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace ett::dump {
namespace {

using format::DiskLabel;
using format::EventRecord;
using format::SessionHeader;

constexpr uint64_t kDiskSectors = 16384;  // 8 MiB

DiskLabel make_label(uint8_t uuid_seed = 1) {
  DiskLabel label{};
  std::memcpy(label.magic, format::kDiskMagic, sizeof(label.magic));
  label.format_version = format::kFormatVersion;
  label.sector_size = format::kSectorSize;
  for (int i = 0; i < 16; ++i) label.disk_uuid[i] = static_cast<uint8_t>(uuid_seed + i);
  label.total_sectors = kDiskSectors;
  label.first_session_lba = format::kFirstSessionLba;
  std::strcpy(label.name, "test disk");
  seal(label);
  return label;
}

class MemoryDisk {
 public:
  explicit MemoryDisk(uint64_t sectors) : m_bytes(sectors * format::kSectorSize) {}

  template <typename T>
  void write(uint64_t lba, const T& value) {
    std::memcpy(&m_bytes[lba * format::kSectorSize], &value, sizeof(T));
  }
  Status read(uint64_t lba, SessionHeader& out) {
    ++reads;
    if (fail_reads) return fail("read error");
    std::memcpy(&out, &m_bytes[lba * format::kSectorSize], sizeof(out));
    return {};
  }
  auto reader() {
    return [this](uint64_t lba, SessionHeader& out) { return read(lba, out); };
  }
  // Appends a session the way the kernel does (header only: the walk never reads chunks).
  SessionHeader append(const DiskLabel& label, uint64_t events) {
    auto point = find_append_point(label, kDiskSectors, reader());
    EXPECT_TRUE(point.ok());
    SessionHeader header{};
    start_session_header(header, label, *point, events);
    header.status = static_cast<uint32_t>(format::SessionStatus::Complete);
    seal(header);
    write(header.start_lba, header);
    return header;
  }

  int reads = 0;
  bool fail_reads = false;

 private:
  std::vector<uint8_t> m_bytes;
};

TEST(KernelSessionCodec, ValidLabel) {
  EXPECT_TRUE(check_label(make_label()).ok());
}

TEST(KernelSessionCodec, LabelWithoutMagicIsNotATraceDisk) {
  DiskLabel label = make_label();
  label.magic[0] = 'X';
  seal(label);
  ASSERT_FALSE(check_label(label).ok());
  EXPECT_STREQ(check_label(label).error().message, "the disk is not an ETT trace disk (run `ett mkdisk`)");
  DiskLabel zero{};
  EXPECT_STREQ(check_label(zero).error().message, kNotATraceDisk);
}

TEST(KernelSessionCodec, LabelWithBadCrcIsNotATraceDisk) {
  DiskLabel label = make_label();
  label.name[3] ^= 1;
  EXPECT_STREQ(check_label(label).error().message, kNotATraceDisk);
}

TEST(KernelSessionCodec, LabelOfAnotherVersionOrGeometryIsRefused) {
  DiskLabel label = make_label();
  label.format_version = 2;
  seal(label);
  EXPECT_FALSE(check_label(label).ok());
  label = make_label();
  label.sector_size = 4096;
  seal(label);
  EXPECT_FALSE(check_label(label).ok());
  label = make_label();
  label.first_session_lba = kDiskSectors;
  seal(label);
  EXPECT_FALSE(check_label(label).ok());
}

TEST(KernelSessionCodec, EmptyDiskAppendsSessionOneAtTheFirstSessionLba) {
  MemoryDisk disk(kDiskSectors);
  const auto point = find_append_point(make_label(), kDiskSectors, disk.reader());
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->lba, format::kFirstSessionLba);
  EXPECT_EQ(point->session_number, 1u);
  EXPECT_EQ(point->existing_sessions, 0u);
}

TEST(KernelSessionCodec, WalkFollowsTheChain) {
  MemoryDisk disk(kDiskSectors);
  const DiskLabel label = make_label();
  const SessionHeader first = disk.append(label, 5000);  // 3 chunks
  EXPECT_EQ(first.session_number, 1u);
  EXPECT_EQ(first.start_lba, format::kFirstSessionLba);
  EXPECT_EQ(first.reserved_sectors, 1 + 3 * format::kChunkSectors);
  const SessionHeader second = disk.append(label, 0);
  EXPECT_EQ(second.session_number, 2u);
  EXPECT_EQ(second.start_lba, first.start_lba + first.reserved_sectors);
  EXPECT_EQ(second.reserved_sectors, 1u);
  const auto point = find_append_point(label, kDiskSectors, disk.reader());
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->lba, second.start_lba + 1);
  EXPECT_EQ(point->session_number, 3u);
  EXPECT_EQ(point->existing_sessions, 2u);
}

TEST(KernelSessionCodec, SessionOfAnEarlierLabelEndsTheChain) {
  MemoryDisk disk(kDiskSectors);
  disk.append(make_label(1), 10);
  const auto point = find_append_point(make_label(2), kDiskSectors, disk.reader());
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->lba, format::kFirstSessionLba);
  EXPECT_EQ(point->session_number, 1u);
}

TEST(KernelSessionCodec, DamagedHeaderEndsTheChain) {
  MemoryDisk disk(kDiskSectors);
  const DiskLabel label = make_label();
  disk.append(label, 10);
  SessionHeader second = disk.append(label, 10);
  second.event_count ^= 1;  // CRC no longer matches
  disk.write(second.start_lba, second);
  const auto point = find_append_point(label, kDiskSectors, disk.reader());
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(point->lba, second.start_lba);
  EXPECT_EQ(point->session_number, 2u);
}

TEST(KernelSessionCodec, InconsistentHeaderIsAnError) {
  MemoryDisk disk(kDiskSectors);
  const DiskLabel label = make_label();
  SessionHeader header = disk.append(label, 10);
  header.reserved_sectors = kDiskSectors;  // runs past the end of the disk
  seal(header);
  disk.write(header.start_lba, header);
  EXPECT_FALSE(find_append_point(label, kDiskSectors, disk.reader()).ok());
}

TEST(KernelSessionCodec, ReadErrorsPropagate) {
  MemoryDisk disk(kDiskSectors);
  disk.fail_reads = true;
  const auto point = find_append_point(make_label(), kDiskSectors, disk.reader());
  ASSERT_FALSE(point.ok());
  EXPECT_STREQ(point.error().message, "read error");
}

TEST(KernelSessionCodec, WalkStopsAtTheSmallerOfLabelAndDrive) {
  MemoryDisk disk(kDiskSectors);
  const auto point = find_append_point(make_label(), format::kFirstSessionLba, disk.reader());
  ASSERT_TRUE(point.ok());
  EXPECT_EQ(disk.reads, 0);
}

TEST(KernelSessionCodec, EventsThatFit) {
  EXPECT_EQ(events_that_fit(8, 8), 0u);
  EXPECT_EQ(events_that_fit(8, 9), 0u);
  EXPECT_EQ(events_that_fit(8, 9 + 63), 0u);
  EXPECT_EQ(events_that_fit(8, 9 + 64), format::kRecordsPerChunk);
  EXPECT_EQ(events_that_fit(8, 9 + 64 * 10 + 5), 10 * format::kRecordsPerChunk);
  // Whatever fits also passes the writer's own check.
  const uint64_t fit = events_that_fit(100, 50000);
  EXPECT_LE(format::session_sectors(fit), 50000u - 100u);
  EXPECT_GT(format::session_sectors(fit + 1), 50000u - 100u);
}

TEST(KernelSessionCodec, StartSessionHeader) {
  const DiskLabel label = make_label(7);
  SessionHeader header{};
  start_session_header(header, label, AppendPoint{200, 4, 3}, 2047);
  EXPECT_EQ(std::string(header.magic, 8), "ETTSESS1");
  EXPECT_EQ(header.format_version, format::kFormatVersion);
  EXPECT_EQ(header.status, static_cast<uint32_t>(format::SessionStatus::Writing));
  EXPECT_EQ(header.session_number, 4u);
  EXPECT_EQ(header.record_size, 16u);
  EXPECT_EQ(header.chunk_sectors, 64u);
  EXPECT_EQ(header.start_lba, 200u);
  EXPECT_EQ(header.event_count, 2047u);
  EXPECT_EQ(header.chunk_count, 2u);  // 2046 records per chunk
  EXPECT_EQ(header.reserved_sectors, 129u);
  EXPECT_EQ(std::memcmp(header.disk_uuid, label.disk_uuid, 16), 0);
  seal(header);
  EXPECT_TRUE(is_session_of(header, label));
  EXPECT_FALSE(is_session_of(header, make_label(8)));
}

std::vector<EventRecord> make_events(size_t count) {
  std::vector<EventRecord> events(count);
  for (size_t i = 0; i < count; ++i)
    events[i] = {1000 + 7 * i,
                 static_cast<uint8_t>(1 + i % 2),
                 static_cast<uint8_t>(i & 0xF),
                 static_cast<uint8_t>(i),
                 0,
                 0};
  return events;
}

void check_chunk(const std::vector<uint8_t>& chunk, uint32_t session, uint64_t index,
                 const EventRecord* expected, uint32_t count) {
  format::ChunkHeader header;
  std::memcpy(&header, chunk.data(), sizeof(header));
  EXPECT_EQ(std::string(header.magic, 4), "ETTC");
  EXPECT_EQ(header.session_number, session);
  EXPECT_EQ(header.chunk_index, index);
  EXPECT_EQ(header.first_seq, index * format::kRecordsPerChunk);
  EXPECT_EQ(header.record_count, count);
  std::vector<uint8_t> zeroed = chunk;
  std::memset(zeroed.data() + offsetof(format::ChunkHeader, crc), 0, 4);
  EXPECT_EQ(header.crc, crc32c(zeroed.data(), zeroed.size()));
  EXPECT_EQ(std::memcmp(chunk.data() + sizeof(header), expected, count * sizeof(EventRecord)), 0);
  for (size_t i = sizeof(header) + count * sizeof(EventRecord); i < chunk.size(); ++i)
    ASSERT_EQ(chunk[i], 0) << "padding at " << i;
}

TEST(KernelSessionCodec, ChunksCarryTheirRecordsAndAValidCrc) {
  const std::vector<EventRecord> events = make_events(format::kRecordsPerChunk + 10);
  std::vector<uint8_t> chunk(format::kChunkBytes, 0xCC);
  EXPECT_EQ(build_chunk(chunk.data(), 3, 0, events.data(), events.size()), format::kRecordsPerChunk);
  check_chunk(chunk, 3, 0, events.data(), format::kRecordsPerChunk);
  std::fill(chunk.begin(), chunk.end(), 0xCC);
  EXPECT_EQ(build_chunk(chunk.data(), 3, 1, events.data(), events.size()), 10u);
  check_chunk(chunk, 3, 1, events.data() + format::kRecordsPerChunk, 10);
}

TEST(KernelSessionCodec, ChunkCrcCatchesAnyChangedByte) {
  const std::vector<EventRecord> events = make_events(5);
  std::vector<uint8_t> chunk(format::kChunkBytes);
  build_chunk(chunk.data(), 1, 0, events.data(), events.size());
  format::ChunkHeader header;
  std::memcpy(&header, chunk.data(), sizeof(header));
  std::memset(chunk.data() + offsetof(format::ChunkHeader, crc), 0, 4);
  chunk[format::kChunkBytes - 1] ^= 0x01;  // in the padding
  EXPECT_NE(header.crc, crc32c(chunk.data(), chunk.size()));
}

}  // namespace
}  // namespace ett::dump
