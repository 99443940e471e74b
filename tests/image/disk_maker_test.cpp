// disk_maker_test.cpp: `ett mkdisk`'s library: labels, refusals, sizes.
#include "image/disk_maker.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

#include "ett/crc32c.h"
#include "image/trace_image.h"
#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;

uint64_t file_size(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_size);
}

TEST(DiskMaker, MakesALabelledImageOfTheDefaultSize) {
  ett::test::TempDir dir;
  MakeDiskOptions options;
  options.path = dir.file("a.img");
  options.name = "bench 3";
  const uint64_t before = static_cast<uint64_t>(std::time(nullptr));
  auto made = make_disk(options);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(file_size(options.path), kDefaultDiskBytes);
  EXPECT_FALSE(made->is_device);

  auto image = TraceImage::open(options.path);
  ASSERT_TRUE(image.ok()) << image.error().message;
  const f::DiskLabel& label = image->label();
  EXPECT_EQ(std::memcmp(&label, &made->label, sizeof(label)), 0);
  EXPECT_EQ(label.format_version, f::kFormatVersion);
  EXPECT_EQ(label.sector_size, f::kSectorSize);
  EXPECT_EQ(label.total_sectors, kDefaultDiskBytes / f::kSectorSize);
  EXPECT_EQ(label.first_session_lba, f::kFirstSessionLba);
  EXPECT_GE(label.created_unix, before);
  EXPECT_LE(label.created_unix, before + 5);
  EXPECT_EQ(image->disk_name(), "bench 3");
  EXPECT_EQ(label.disk_uuid[6] >> 4, 4);       // version 4
  EXPECT_EQ(label.disk_uuid[8] & 0xC0, 0x80);  // RFC 4122 variant
  EXPECT_EQ(label.crc, ett::crc32c(&label, f::kSectorSize - 4));
  EXPECT_TRUE(image->sessions().empty());
}

TEST(DiskMaker, UuidsDiffer) {
  EXPECT_NE(std::memcmp(new_label(100, "").disk_uuid, new_label(100, "").disk_uuid, 16), 0);
}

TEST(DiskMaker, RefusesToOverwriteWithoutForce) {
  ett::test::TempDir dir;
  MakeDiskOptions options;
  options.path = dir.file("a.img");
  options.size_bytes = 1 << 20;
  options.size_given = true;
  ASSERT_TRUE(make_disk(options).ok());
  auto again = make_disk(options);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::Usage);
  EXPECT_NE(again.error().message.find("already exists; use --force"), std::string::npos);

  // --force relabels; without --size the image keeps its size; old sessions are gone.
  {
    ett::test::TestDiskWriter writer(options.path);
    ett::test::SessionSpec spec;
    spec.records = ett::test::make_records(3);
    writer.append(spec);
  }
  options.force = true;
  options.size_given = false;
  options.size_bytes = kDefaultDiskBytes;
  auto forced = make_disk(options);
  ASSERT_TRUE(forced.ok()) << forced.error().message;
  EXPECT_EQ(file_size(options.path), 1u << 20);
  auto image = TraceImage::open(options.path);
  ASSERT_TRUE(image.ok());
  EXPECT_TRUE(image->sessions().empty());
}

TEST(DiskMaker, RefusesBadSizesAndNames) {
  ett::test::TempDir dir;
  MakeDiskOptions options;
  options.path = dir.file("small.img");
  options.size_given = true;
  options.size_bytes = kMinDiskBytes - f::kSectorSize;
  auto small = make_disk(options);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message.find("too small"), std::string::npos);
  options.size_bytes = kMinDiskBytes + 1;
  auto odd = make_disk(options);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().message.find("multiple of 512"), std::string::npos);
  options.size_bytes = kMinDiskBytes;
  options.name = std::string(64, 'x');
  auto long_name = make_disk(options);
  ASSERT_FALSE(long_name.ok());
  EXPECT_NE(long_name.error().message.find("at most 63"), std::string::npos);
  std::error_code error;
  EXPECT_FALSE(std::filesystem::exists(options.path, error));  // nothing left behind

  options.name = std::string(63, 'x');
  auto smallest = make_disk(options);
  ASSERT_TRUE(smallest.ok()) << smallest.error().message;
  EXPECT_EQ(file_size(options.path), kMinDiskBytes);
  // The smallest disk holds one session of one chunk.
  ett::test::TestDiskWriter writer(options.path);
  ett::test::SessionSpec spec;
  spec.records = ett::test::make_records(f::kRecordsPerChunk);
  writer.append(spec);
  auto image = TraceImage::open(options.path);
  ASSERT_TRUE(image.ok());
  auto data = image->read_session(0);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->summary.health, SessionHealth::Ok);
  EXPECT_EQ(image->disk_name(), std::string(63, 'x'));
}

TEST(DiskMaker, RefusesDirectories) {
  ett::test::TempDir dir;
  MakeDiskOptions options;
  options.path = dir.file("");
  auto made = make_disk(options);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("neither a regular file nor a block device"), std::string::npos);
}

// Logical blocks of 512 to 4096 bytes (powers of two) take a label; others are refused by name.
TEST(DiskMaker, TakesBlocksOfFiveHundredTwelveToFourKibibytes) {
  for (const uint32_t ok : {512u, 1024u, 2048u, 4096u})
    EXPECT_TRUE(check_logical_block_size("/dev/sdY", ok).ok());
  for (const uint32_t bad : {256u, 520u, 8192u}) {
    auto refused = check_logical_block_size("/dev/sdY", bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().kind, ErrorKind::Usage);
    EXPECT_EQ(refused.error().message, "/dev/sdY: " + std::to_string(bad) +
                                           "-byte logical blocks; a trace disk needs 512-, 1024-, 2048- or "
                                           "4096-byte blocks");
  }
  // The first session's header is the last sector of a block (from LBA 8 on).
  EXPECT_EQ(first_session_lba_for(512), 8u);
  EXPECT_EQ(first_session_lba_for(1024), 9u);
  EXPECT_EQ(first_session_lba_for(2048), 11u);
  EXPECT_EQ(first_session_lba_for(4096), 15u);
}

// An image for a 4Kn disk: the label says where the first session goes (LBA 15, the last sector of block 1),
// blanks the sectors up to it, and the size must be whole blocks.
TEST(DiskMaker, AnImageForFourKibibyteBlocks) {
  ett::test::TempDir dir;
  MakeDiskOptions options;
  options.path = dir.file("4kn.img");
  options.block_bytes = 4096;
  options.size_bytes = (1u << 20) + 512;
  options.size_given = true;
  auto odd = make_disk(options);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message, options.path + ": size 1049088 is not a multiple of 4096 bytes");
  options.size_bytes = 1u << 20;
  auto made = make_disk(options);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(made->label.first_session_lba, 15u);
  EXPECT_EQ(made->label.sector_size, 512u) << "the format's unit stays 512 bytes";
  EXPECT_EQ(made->label.total_sectors, 2048u);
  options.block_bytes = 8192;
  options.force = true;
  auto refused = make_disk(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.error().message,
      options.path + ": 8192-byte logical blocks; a trace disk needs 512-, 1024-, 2048- or 4096-byte blocks");
}

// The same through the real ioctl: a loop device with 4096-byte logical blocks gets a label for them. Making
// one needs root and the loop driver: skipped without them.
TEST(DiskMaker, LabelsALoopDeviceWithFourKibibyteBlocks) {
  ett::test::TempDir dir;
  const std::string backing = dir.file("backing.img");
  std::ofstream(backing, std::ios::binary).close();
  ASSERT_EQ(::truncate(backing.c_str(), 16 << 20), 0);
  FILE* losetup =
      ::popen(("losetup --find --show --sector-size 4096 '" + backing + "' 2>/dev/null").c_str(), "r");
  ASSERT_NE(losetup, nullptr);
  char line[128] = {};
  const bool got = std::fgets(line, sizeof(line), losetup) != nullptr;
  if (::pclose(losetup) != 0 || !got) GTEST_SKIP() << "no loop device (needs root and the loop driver)";
  const std::string device = std::string(line).substr(0, std::strcspn(line, "\n"));
  struct Detach {
    std::string device;
    ~Detach() { (void)std::system(("losetup -d '" + device + "'").c_str()); }
  } detach{device};

  MakeDiskOptions options;
  options.path = device;
  options.block_bytes = 512;
  auto mismatch = make_disk(options);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().message,
            device + ": --block-size 512 does not match the device's 4096-byte logical blocks");
  options.block_bytes = 0;
  auto made = make_disk(options);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(made->label.first_session_lba, 15u);
}

}  // namespace
}  // namespace ett::host
