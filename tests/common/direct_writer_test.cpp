// direct_writer_test.cpp: a file written past the page cache holds its text, byte for byte, whatever the
// pieces it came in; its full blocks are not left in the page cache; a restart and a failed write behave.
#include "common/direct_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "support/page_cache.h"

namespace ett::host {
namespace {

constexpr size_t kBlock = DirectWriter::kBlockBytes;

class DirectWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = test::make_disk_directory(m_on_tmpfs);
    ASSERT_FALSE(m_dir.empty());
    m_path = m_dir + "/out";
    m_fd = UniqueFd(::open(m_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(m_fd.valid());
    m_writer = DirectWriter::start(m_fd.get(), m_path);
    if (!m_writer) GTEST_SKIP() << m_dir << ": its file system does not take O_DIRECT";
  }
  void TearDown() override {
    m_writer.reset();
    m_fd.reset();
    ::unlink(m_path.c_str());
    ::rmdir(m_dir.c_str());
  }
  std::string read() const {
    std::ifstream in(m_path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::string m_dir, m_path;
  bool m_on_tmpfs = false;
  UniqueFd m_fd;
  std::unique_ptr<DirectWriter> m_writer;
};

// Text that differs at every offset (a byte out of place shows).
std::string text_of(size_t size, unsigned salt) {
  std::string text(size, '\0');
  uint32_t x = 2463534242u ^ salt;
  for (char& c : text) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>('!' + x % 90);
  }
  return text;
}

// Pieces of every awkward size: empty, a byte, around a page and a block, several blocks at once (more than
// the writer has blocks); the file is the text, its end a part page.
TEST_F(DirectWriterTest, HoldsTheTextWhateverThePiecesItCameIn) {
  const std::vector<size_t> pieces{0,          1,          4095,  4096,           4097,   kBlock - 1, kBlock,
                                   kBlock + 1, 3 * kBlock, 12345, 7 * kBlock + 3, 100000, 1};
  size_t total = 0;
  for (size_t piece : pieces) total += piece;
  const std::string text = text_of(total, 1);
  size_t at = 0;
  for (size_t piece : pieces) {
    m_writer->append(std::string_view(text).substr(at, piece));
    at += piece;
  }
  ASSERT_TRUE(m_writer->finish());
  EXPECT_FALSE(m_writer->refused());
  const std::string written = read();
  EXPECT_EQ(written.size(), text.size());
  EXPECT_TRUE(written == text);
}

// The full blocks went to the disk without staying in the page cache, and the whole pages of the last part
// block; its part page went through the cache.
// A tmpfs keeps its files in memory whatever the writer does.
TEST_F(DirectWriterTest, LeavesItsFullBlocksOutOfThePageCache) {
  if (m_on_tmpfs) GTEST_SKIP() << m_dir << " is a tmpfs";
  const size_t size = 6 * kBlock + 5000;
  const std::string text = text_of(size, 2);
  for (size_t at = 0; at < size; at += 300000) m_writer->append(std::string_view(text).substr(at, 300000));
  ASSERT_TRUE(m_writer->finish());
  EXPECT_EQ(test::resident_pages(m_fd.get(), 0, 6 * kBlock), 0u);
  // Its whole pages went past the cache too: only the last part page stays.
  EXPECT_EQ(test::resident_pages(m_fd.get(), 6 * kBlock, size), 1u);
  EXPECT_TRUE(read() == text);
}

// A file shorter than a block (written by the caller's thread at finish): its whole pages past the page
// cache, its last part page through it.
TEST_F(DirectWriterTest, WritesAFileShorterThanABlock) {
  const std::string text = text_of(10000, 3);
  m_writer->append(text);
  ASSERT_TRUE(m_writer->finish());
  EXPECT_FALSE(m_writer->refused());
  if (!m_on_tmpfs) {
    EXPECT_EQ(test::resident_pages(m_fd.get(), 0, text.size()), 1u);  // 10000 = 2 pages + 1808
  }
  EXPECT_EQ(read(), text);  // (reading it brings it into the page cache)
}

// Restarted after blocks went on their way (and with a part block gathered), then truncated: the file is the
// second text alone.
TEST_F(DirectWriterTest, StartsAgainFromByteZero) {
  const std::string first = text_of(5 * kBlock + 777, 4), second = text_of(2 * kBlock + 99, 5);
  m_writer->append(first);
  m_writer->restart();
  ASSERT_EQ(::ftruncate(m_fd.get(), 0), 0);
  for (size_t at = 0; at < second.size(); at += 65536)
    m_writer->append(std::string_view(second).substr(at, 65536));
  ASSERT_TRUE(m_writer->finish());
  EXPECT_TRUE(read() == second);
}

// A file system that refuses the direct writes (here: blocks a byte past their alignment) gets the text
// through the page cache all the same, the refused block included, and written behind.
TEST_F(DirectWriterTest, GoesThroughThePageCacheWhereDirectWritesAreRefused) {
  if (m_on_tmpfs) GTEST_SKIP() << m_dir << " is a tmpfs, whose O_DIRECT may take any alignment";
  m_writer.reset();
  m_writer = DirectWriter::start(m_fd.get(), m_path, 1);
  ASSERT_TRUE(m_writer);
  const std::string text = text_of(5 * kBlock + 4321, 7);
  for (size_t at = 0; at < text.size(); at += 1 << 20)
    m_writer->append(std::string_view(text).substr(at, 1 << 20));
  ASSERT_TRUE(m_writer->finish());
  EXPECT_TRUE(m_writer->refused());
  EXPECT_TRUE(read() == text);
}

// A write the system refuses (the file size limit, EFBIG) is the error finish() returns, naming the file;
// what comes after it is dropped, with no hang while blocks wait.
TEST_F(DirectWriterTest, AFailedWriteIsItsError) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = old;
  limit.rlim_cur = 2 * kBlock;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const std::string text = text_of(kBlock, 6);
  for (int i = 0; i < 12; ++i) m_writer->append(text);
  const Status status = m_writer->finish();
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find(m_path), std::string::npos) << status.error().message;
  EXPECT_NE(status.error().message.find("too large"), std::string::npos) << status.error().message;
  EXPECT_EQ(read(), text + text);
}

}  // namespace
}  // namespace ett::host
