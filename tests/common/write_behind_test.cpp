// write_behind_test.cpp: a big file leaves the page cache behind its writer and holds what was written.
#include "common/write_behind.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "common/unique_fd.h"
#include "support/page_cache.h"

namespace ett::host {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

class WriteBehindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool on_tmpfs = false;
    m_dir = test::make_disk_directory(on_tmpfs);
    ASSERT_FALSE(m_dir.empty());
    if (on_tmpfs) GTEST_SKIP() << m_dir << " is a tmpfs: its pages cannot leave the memory";
  }
  void TearDown() override {
    for (const char* name : {"/plain", "/behind"}) ::unlink((m_dir + name).c_str());
    ::rmdir(m_dir.c_str());
  }
  std::string path(const char* name) const { return m_dir + name; }

  std::string m_dir;
};

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
    EXPECT_EQ(test::resident_pages(behind.get(), 0, size - window.keep_bytes), 0u);
  }
  EXPECT_GT(test::resident_pages(plain.get(), 0, size - window.keep_bytes),
            (size - window.keep_bytes) / page / 2);
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
  EXPECT_EQ(test::resident_pages(fd.get(), 0, 3 * kMiB),
            3 * kMiB / static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
}

}  // namespace
}  // namespace ett::host
