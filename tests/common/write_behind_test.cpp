// write_behind_test.cpp: a big file leaves the page cache behind its writer and holds what was written.
#include "common/write_behind.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ett::host {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A directory on a disk: /var/tmp, which is not a tmpfs on Debian (a tmpfs has no disk to write its pages
// to).
class WriteBehindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(::mkdtemp(m_dir.data()), nullptr);
    struct statfs fs {};
    ASSERT_EQ(::statfs(m_dir.c_str(), &fs), 0);
    if (fs.f_type == TMPFS_MAGIC) GTEST_SKIP() << m_dir << " is a tmpfs: its pages cannot leave the memory";
  }
  void TearDown() override {
    for (const char* name : {"/plain", "/behind"}) ::unlink((m_dir + name).c_str());
    ::rmdir(m_dir.c_str());
  }
  std::string path(const char* name) const { return m_dir + name; }

  std::string m_dir = "/var/tmp/ett-write-behind-XXXXXX";
};

// Pages of [begin, end) of the file in the page cache.
size_t resident_pages(int fd, uint64_t begin, uint64_t end) {
  const long page = ::sysconf(_SC_PAGESIZE);
  void* map = ::mmap(nullptr, end, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return SIZE_MAX;
  std::vector<unsigned char> in_core((end + page - 1) / page);
  const bool ok = ::mincore(map, end, in_core.data()) == 0;
  ::munmap(map, end);
  if (!ok) return SIZE_MAX;
  size_t count = 0;
  for (uint64_t at = begin / page; at < in_core.size(); ++at) count += in_core[at] & 1;
  return count;
}

// Writes `size` bytes of a pattern in 256 KB pieces; `behind` is told after each.
void write_pattern(int fd, uint64_t size, WriteBehind* behind) {
  std::string piece(256 * 1024, '\0');
  for (uint64_t at = 0; at < size; at += piece.size()) {
    for (size_t i = 0; i < piece.size(); i += 512)
      piece[i] = static_cast<char>('a' + (at / piece.size() + i) % 26);
    ASSERT_EQ(::write(fd, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
    if (behind) behind->wrote(at + piece.size());
  }
}

// What lies more than the kept window behind the end is written back and gone from the page cache; the same
// file written without it stays cached (so mincore sees what it should).
TEST_F(WriteBehindTest, DropsThePagesBehindTheKeptWindow) {
  const WriteBehind::Window window{.step_bytes = kMiB, .keep_bytes = 4 * kMiB};
  const uint64_t size = 24 * kMiB, page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  UniqueFd plain(::open(path("/plain").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  UniqueFd behind(::open(path("/behind").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  ASSERT_TRUE(plain.valid() && behind.valid());
  write_pattern(plain.get(), size, nullptr);
  {
    WriteBehind write_behind(behind.get(), window);
    write_pattern(behind.get(), size, &write_behind);
    write_behind.settle();
    EXPECT_EQ(resident_pages(behind.get(), 0, size - window.keep_bytes), 0u);
  }
  EXPECT_GT(resident_pages(plain.get(), 0, size - window.keep_bytes), (size - window.keep_bytes) / page / 2);
  std::ifstream a(path("/plain"), std::ios::binary), b(path("/behind"), std::ios::binary);
  EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b), {}));
}

// Below the kept window no thread starts and nothing is dropped.
TEST_F(WriteBehindTest, LeavesASmallFileAlone) {
  UniqueFd fd(::open(path("/behind").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd.valid());
  WriteBehind write_behind(fd.get(), {.step_bytes = kMiB, .keep_bytes = 4 * kMiB});
  write_pattern(fd.get(), 3 * kMiB, &write_behind);
  write_behind.settle();
  EXPECT_EQ(resident_pages(fd.get(), 0, 3 * kMiB), 3 * kMiB / static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
}

}  // namespace
}  // namespace ett::host
