// huge_pages.cpp: madvise(MADV_HUGEPAGE) on the aligned interior of a block, and its pages faulted in on two
// threads.
#include "common/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <thread>

namespace ett::host {

bool advise_huge_pages(void* block, size_t size) {
  const auto begin = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (begin + size) & ~(kHugePageBytes - 1);
  if (last <= first) return false;
  return ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0;
}

namespace {

// Smaller blocks are not worth a second thread: fault_in_on_two_threads leaves them alone,
// FaultAhead::of_block gives them none.
constexpr size_t kSmallestThreaded = size_t{8} << 20;

void fault_in(char* from, char* to) {
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  // madvise takes a page-aligned start; the page holding `from` is populated whole, which changes no byte.
  const uintptr_t start = reinterpret_cast<uintptr_t>(from) & ~(page - 1);
  if (::madvise(reinterpret_cast<void*>(start), static_cast<size_t>(to - reinterpret_cast<char*>(start)),
                MADV_POPULATE_WRITE) == 0)
    return;
  for (char* at = from; at < to;
       at = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(at) | (page - 1)) + 1))
    *static_cast<volatile char*>(at) = 0;
}

}  // namespace

void fault_in_on_two_threads(void* block, size_t size) {
  if (size < kSmallestThreaded) return;
  char* const begin = static_cast<char*>(block);
  char* const end = begin + size;
  // Split at a huge-page boundary, so that no 2 MB page is faulted from both sides.
  const uintptr_t half = reinterpret_cast<uintptr_t>(begin + size / 2);
  char* const middle = reinterpret_cast<char*>((half + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
  if (middle >= end) return fault_in(begin, end);
  std::thread other(fault_in, middle, end);
  fault_in(begin, middle);
  other.join();
}

std::unique_ptr<FaultAhead> FaultAhead::of_block(void* block, size_t size) {
  if (size < kSmallestThreaded) return nullptr;
  return std::make_unique<FaultAhead>(block, size);
}

void FaultAhead::follow(std::unique_ptr<FaultAhead>& ahead, const void* data, size_t bytes) {
  if (!ahead) return;
  if (data != ahead->block())
    ahead.reset();
  else
    ahead->filled(bytes);
}

FaultAhead::FaultAhead(void* block, size_t size, size_t window)
    : m_begin(static_cast<char*>(block)), m_size(size), m_window(window), m_thread([this] { run(); }) {}

FaultAhead::~FaultAhead() {
  m_filled.store(SIZE_MAX);
  m_filled.notify_one();
  m_thread.join();
}

void FaultAhead::filled(size_t bytes) {
  // Woken a huge page at a time, not per call: a wake is a system call when the thread waits.
  if (bytes < m_told + kHugePageBytes) return;
  m_told = bytes;
  m_filled.store(bytes);
  m_filled.notify_one();
}

void FaultAhead::run() {
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(m_begin);
  size_t faulted = 0;  // bytes from the start known faulted in (by this thread, or passed by the filler)
  for (;;) {
    const size_t filled = m_filled.load();
    if (filled == SIZE_MAX) return;
    faulted = std::max(faulted, filled);
    const size_t target = std::min(m_size, filled + m_window);
    if (faulted >= target) {
      if (target == m_size) return;  // all of it
      m_filled.wait(filled);
      continue;
    }
    // One huge page's worth per call (page-aligned start, as madvise wants), then a look at the filler again.
    const uintptr_t from = (base + faulted) & ~(page - 1);
    const uintptr_t to = std::min(base + target, ((base + faulted) | (kHugePageBytes - 1)) + 1);
    if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0) return;
    faulted = to - base;
  }
}

}  // namespace ett::host
