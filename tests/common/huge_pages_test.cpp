// huge_pages_test.cpp: advise_huge_pages marks exactly the 2 MB-aligned interior of a block (the kernel's
// VmFlags "hg" in /proc/self/smaps), and refuses a block with no aligned 2 MB inside; fault_in_on_two_threads
// makes every page of a big block resident (mincore) and leaves a small one alone; faulted_in_vector;
// FaultAhead keeps a window ahead of its filler resident, no more, and never changes a byte.
#include "common/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace ett::host;

namespace {

// The ranges of [begin, end) whose mappings carry the "hg" (MADV_HUGEPAGE) flag.
std::vector<std::pair<uintptr_t, uintptr_t>> advised_ranges(uintptr_t begin, uintptr_t end) {
  std::ifstream smaps("/proc/self/smaps");
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::string line;
  uintptr_t from = 0, to = 0;
  while (std::getline(smaps, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    const size_t dash = first.find('-');
    if (dash != std::string::npos && first.find(':') == std::string::npos) {
      from = std::stoull(first.substr(0, dash), nullptr, 16);
      to = std::stoull(first.substr(dash + 1), nullptr, 16);
    } else if (first == "VmFlags:" && from < end && to > begin) {
      for (std::string flag; fields >> flag;)
        if (flag == "hg") out.emplace_back(std::max(from, begin), std::min(to, end));
    }
  }
  return out;
}

class Mapping {
 public:
  explicit Mapping(size_t size) : m_size(size) {
    m_base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() {
    if (m_base != MAP_FAILED) ::munmap(m_base, m_size);
  }
  char* base() const { return static_cast<char*>(m_base); }

 private:
  void* m_base;
  size_t m_size;
};

// How many pages of [block, block + size) (page-aligned) are resident.
size_t resident_pages(char* block, size_t size) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> flags((size + page - 1) / page);
  if (::mincore(block, size, flags.data()) != 0) return SIZE_MAX;
  return static_cast<size_t>(
      std::count_if(flags.begin(), flags.end(), [](unsigned char f) { return f & 1; }));
}

}  // namespace

TEST(HugePages, FaultsInEveryPageOfABigBlockAndLeavesASmallOneAlone) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = 9 * kHugePageBytes;  // 18 MB: over the 8 MB below which nothing is done
  Mapping mapping(mapped);
  ASSERT_NE(mapping.base(), MAP_FAILED);
  ASSERT_EQ(resident_pages(mapping.base(), mapped), 0u) << "a fresh mapping has no page yet";
  // A block that starts and ends inside a page: the pages holding its ends are faulted in too.
  char* block = mapping.base() + 100;
  const size_t size = mapped - 200;
  fault_in_on_two_threads(block, size);
  EXPECT_EQ(resident_pages(mapping.base(), mapped), mapped / page);
  EXPECT_EQ(std::count(block, block + size, 0), static_cast<std::ptrdiff_t>(size)) << "its bytes changed";

  Mapping small(4 << 20);
  ASSERT_NE(small.base(), MAP_FAILED);
  fault_in_on_two_threads(small.base(), 4 << 20);
  EXPECT_EQ(resident_pages(small.base(), 4 << 20), 0u);
}

// A faulted-in vector is an ordinary one of `count` zeros, big (faulted in first) or small.
TEST(HugePages, FaultedInVectorHoldsCountZeros) {
  for (size_t count : {size_t{3} << 20, size_t{10}, size_t{0}}) {
    const std::vector<uint64_t> values = faulted_in_vector<uint64_t>(count);
    ASSERT_EQ(values.size(), count);
    EXPECT_EQ(std::count(values.begin(), values.end(), 0u), static_cast<std::ptrdiff_t>(count));
  }
}

TEST(HugePages, AdvisesTheAlignedInteriorOnly) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  const size_t mapped = 5 * kHugePageBytes;
  Mapping mapping(mapped);
  ASSERT_NE(mapping.base(), MAP_FAILED);
  // A block that starts a page past the mapping and ends a page before it: its aligned interior is one or two
  // huge pages, wherever the kernel put the mapping.
  char* block = mapping.base() + 4096;
  const size_t size = mapped - 2 * 4096;
  const auto begin = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const uintptr_t last = (begin + size) / kHugePageBytes * kHugePageBytes;
  ASSERT_GT(last, first);
  const auto whole_begin = reinterpret_cast<uintptr_t>(mapping.base());
  EXPECT_TRUE(advised_ranges(whole_begin, whole_begin + mapped).empty()) << "advised before advise";
  ASSERT_TRUE(advise_huge_pages(block, size));
  const auto advised = advised_ranges(whole_begin, whole_begin + mapped);
  ASSERT_EQ(advised.size(), 1u);
  EXPECT_EQ(advised[0].first, first);
  EXPECT_EQ(advised[0].second, last);
}

TEST(HugePages, RefusesABlockWithoutAnAlignedHugePage) {
  Mapping mapping(3 * kHugePageBytes);
  ASSERT_NE(mapping.base(), MAP_FAILED);
  const auto base = reinterpret_cast<uintptr_t>(mapping.base());
  // From one page past an aligned address to one page before the next: no whole aligned 2 MB inside.
  const uintptr_t aligned = (base + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  EXPECT_FALSE(advise_huge_pages(reinterpret_cast<void*>(aligned + 4096), kHugePageBytes - 2 * 4096));
  EXPECT_TRUE(advised_ranges(base, base + 3 * kHugePageBytes).empty());
}

// The resident pages of [block, block + size) once they stop changing for a while (FaultAhead's thread works
// on its own time), or after 30 s.
size_t settled_resident_pages(char* block, size_t size, size_t expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  size_t resident = resident_pages(block, size);
  while (resident != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    resident = resident_pages(block, size);
  }
  return resident;
}

TEST(HugePages, FaultAheadKeepsAWindowAheadOfTheFillerAndChangesNoByte) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = 16 * kHugePageBytes;  // 32 MB
  const size_t window = 4 * kHugePageBytes;
  Mapping mapping(mapped);
  ASSERT_NE(mapping.base(), MAP_FAILED);
  char* block = mapping.base();
  Mapping probe(page);
  ASSERT_NE(probe.base(), MAP_FAILED);
  if (::madvise(probe.base(), page, MADV_POPULATE_WRITE) != 0)
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14): FaultAhead does nothing";
  {
    FaultAhead ahead(block, mapped, window);
    EXPECT_EQ(ahead.block(), block);
    // Nothing filled yet: the first window, and then no page more (a later look, after a pause, finds the
    // same count).
    EXPECT_EQ(settled_resident_pages(block, mapped, window / page), window / page);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(resident_pages(block, mapped), window / page) << "faulted in past the window";
    // The filler writes 5 MB, tells it: the window moves with it. A step of less than a huge page is not
    // passed on (no wake per batch).
    const size_t filled = 5 << 20;
    std::memset(block, 0x5A, filled);
    ahead.filled(filled);
    const size_t expected = (filled + window + page - 1) / page;
    EXPECT_EQ(settled_resident_pages(block, mapped, expected), expected);
    ahead.filled(filled + kHugePageBytes / 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(resident_pages(block, mapped), expected);
    // Within a window of the end: the rest of the block, and the thread ends on its own.
    const size_t most = mapped - window / 2;
    std::memset(block + filled, 0x5A, most - filled);
    ahead.filled(most);
    EXPECT_EQ(settled_resident_pages(block, mapped, mapped / page), mapped / page);
    EXPECT_EQ(std::count(block, block + most, 0x5A), static_cast<std::ptrdiff_t>(most));
    EXPECT_EQ(std::count(block + most, block + mapped, 0), static_cast<std::ptrdiff_t>(mapped - most));
  }
  // Stopped while it waits on a filler that never comes: the destructor returns.
  Mapping other(mapped);
  ASSERT_NE(other.base(), MAP_FAILED);
  { FaultAhead idle(other.base(), mapped, window); }
  EXPECT_LE(resident_pages(other.base(), mapped), window / page);
}

// A block under 8 MB gets no thread; a bigger one does, and ends it when its filler's data moves away.
TEST(HugePages, FaultAheadOfABlockFollowsItsFillerUntilTheDataMoves) {
  Mapping small(size_t{4} << 20), big(size_t{16} << 20);
  ASSERT_NE(small.base(), MAP_FAILED);
  ASSERT_NE(big.base(), MAP_FAILED);
  EXPECT_EQ(FaultAhead::of_block(small.base(), size_t{4} << 20), nullptr);
  std::unique_ptr<FaultAhead> none;
  FaultAhead::follow(none, small.base(), 1);  // nothing to tell
  EXPECT_EQ(none, nullptr);
  std::unique_ptr<FaultAhead> ahead = FaultAhead::of_block(big.base(), size_t{16} << 20);
  ASSERT_NE(ahead, nullptr);
  EXPECT_EQ(ahead->block(), big.base());
  FaultAhead::follow(ahead, big.base(), size_t{3} << 20);
  EXPECT_NE(ahead, nullptr);
  FaultAhead::follow(ahead, small.base(), size_t{3} << 20);  // the filler's vector grew elsewhere
  EXPECT_EQ(ahead, nullptr);
}
