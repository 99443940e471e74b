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

// A 4Kn device would get a label that counts 512-byte sectors it does not have: refused by its logical block
// size (BLKSSZGET), which this check is given.
TEST(DiskMaker, RefusesDevicesWithoutFiveHundredTwelveByteBlocks) {
  EXPECT_TRUE(check_logical_block_size("/dev/sdY", 512).ok());
  auto refused = check_logical_block_size("/dev/sdY", 4096);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::Usage);
  EXPECT_EQ(
      refused.error().message,
      "/dev/sdY: the device has 4096-byte logical blocks; a trace disk has 512-byte sectors (disks with "
      "4096-byte logical blocks, 4Kn, are not supported)");
  EXPECT_FALSE(check_logical_block_size("/dev/sdY", 1024).ok());
}

// The same refusal through the real ioctl: a loop device with 4096-byte logical blocks. Making one needs root
// and the loop driver: skipped without them.
TEST(DiskMaker, RefusesALoopDeviceWithFourKibibyteBlocks) {
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
  auto made = make_disk(options);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().message,
            device +
                ": the device has 4096-byte logical blocks; a trace disk has 512-byte "
                "sectors (disks with 4096-byte logical blocks, 4Kn, are not supported)");
  std::ifstream in(backing, std::ios::binary);
  std::vector<char> head(1 << 20);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  EXPECT_TRUE(std::all_of(head.begin(), head.end(), [](char c) { return c == 0; })) << "nothing written";
}

}  // namespace
}  // namespace ett::host
