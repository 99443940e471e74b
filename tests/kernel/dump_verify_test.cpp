// dump_verify_test.cpp: the dump's read-back (kernel/dump/session_verify) through the NVMe driver and its
// register model: a session that reads back as written passes; a read that returns other bytes, a write the
// drive dropped and a read that fails are each named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "drivers/storage/nvme.h"
#include "dump/session_verify.h"
#include "storage_models.h"

namespace ett::test {
namespace {

using drivers::storage::NvmeController;
using drivers::storage::NvmeDisk;

struct DumpVerifyFixture : ::testing::Test {
  GuestMemory memory{4 << 20};
  SimClock clock;
  NvmeModel nvme{memory};
  DmaArea area = memory.area(0x20000, NvmeController::kDmaBytes);
  std::vector<format::EventRecord> events;
  format::SessionHeader header{};
  dump::StallTable stalls{};
  std::vector<uint8_t> scratch = std::vector<uint8_t>(format::kChunkBytes);
  std::vector<uint8_t> expected = std::vector<uint8_t>(format::kChunkBytes);

  void SetUp() override {
    NvmeModel::Namespace ns;
    ns.data.assign(8192 * 512, 0);
    nvme.namespaces.push_back(ns);
    for (uint32_t i = 0; i < 5000; ++i) {
      format::EventRecord record{};
      record.tsc = 1000 + 7ull * i;
      record.code = static_cast<uint8_t>(i);
      record.aux = i;
      events.push_back(record);
    }
    format::DiskLabel label{};
    dump::start_session_header(header, label, {64, 1, 0}, events.size());
    format::StallRecord stall{};
    stall.length_ticks = 99;
    dump::build_stall_table(stalls, header, &stall, 1);
    dump::seal(header);
  }

  // Writes the session the way the kernel's dump does (header, stall table, chunks).
  void write_session(NvmeDisk& disk) {
    ASSERT_TRUE(disk.write(header.start_lba, 1, &header));
    ASSERT_TRUE(disk.write(header.start_lba + 1, format::kStallTableSectors, &stalls));
    for (uint64_t index = 0; index < header.chunk_count; ++index) {
      dump::build_chunk(expected.data(), header.session_number, index, events.data(), events.size());
      ASSERT_TRUE(disk.write(dump::chunk_lba(header, index), format::kChunkSectors, expected.data()));
    }
  }

  Status verify(NvmeDisk& disk) {
    ETT_TRY(dump::verify_session_body(disk, header, stalls, events.data(), events.size(), scratch.data(),
                                      expected.data()));
    return dump::verify_session_header(disk, header, &header, 1, scratch.data());
  }
};

TEST_F(DumpVerifyFixture, ASessionThatReadsBackAsWrittenPasses) {
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  ASSERT_GT(header.chunk_count, 2u);
  write_session(*disk);
  auto verified = verify(*disk);
  EXPECT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(nvme.io_commands[0x02], static_cast<int>(1 + 1 + header.chunk_count)) << "every part is read";
}

TEST_F(DumpVerifyFixture, EachPartThatReadsBackDifferentIsNamed) {
  struct Case {
    uint64_t lba;
    std::string message;
  };
  const uint64_t chunk1 = dump::chunk_lba(header, 1);
  const Case cases[] = {
      {header.start_lba,
       "the dump did not read back as written: the session header, sector at LBA 64 differs"},
      {header.start_lba + 3,
       "the dump did not read back as written: the stall table, sector at LBA 67 differs"},
      {chunk1 + 5, "the dump did not read back as written: chunk 1, sector at LBA " +
                       std::to_string(chunk1 + 5) + " differs"},
  };
  for (const Case& c : cases) {
    NvmeModel model(memory);
    model.namespaces = nvme.namespaces;
    auto controller = NvmeController::open(model, clock, area);
    ASSERT_TRUE(controller);
    auto disk = NvmeDisk::open(*controller, 1);
    ASSERT_TRUE(disk);
    write_session(*disk);
    model.corrupt_read_lba = static_cast<int64_t>(c.lba);
    auto verified = verify(*disk);
    ASSERT_FALSE(verified) << c.lba;
    EXPECT_EQ(verified.error().message, c.message);
  }
}

// The drive said the write succeeded and did not store it: only the read-back sees it.
TEST_F(DumpVerifyFixture, AWriteTheDriveDroppedIsFound) {
  const uint64_t last = dump::chunk_lba(header, header.chunk_count - 1);
  nvme.lose_write_lba = static_cast<int64_t>(last + 63);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  // The sector holds what a previous session left there.
  nvme.namespaces[0].data[(last + 63) * 512 + 10] = 0xEE;
  write_session(*disk);
  auto verified = verify(*disk);
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().message, "the dump did not read back as written: chunk " +
                                          std::to_string(header.chunk_count - 1) + ", sector at LBA " +
                                          std::to_string(last + 63) + " differs");
}

TEST_F(DumpVerifyFixture, AReadThatFailsIsNamed) {
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  write_session(*disk);
  nvme.fail_opcode = 0x02;
  auto verified = verify(*disk);
  ASSERT_FALSE(verified);
  EXPECT_EQ(
      std::string(verified.error().message),
      "the dump could not be read back: the stall table (LBA 65): nvme: READ failed: status code type 0, "
      "status code 0x06");
}

}  // namespace
}  // namespace ett::test
