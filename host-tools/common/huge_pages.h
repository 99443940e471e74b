// huge_pages.h: asks the kernel to back a large block of memory with transparent huge pages, and to fault a
// block in on two threads, or ahead of the thread that fills it.
//
// A 10 M-event analysis holds a few arrays of hundreds of MB (the events, the actions, their durations). With
// 4 KB pages every first touch of a page is a page fault and every access a TLB walk; a kernel that gives
// huge pages only where asked (transparent_hugepage=madvise) gives them to a block advised before it is
// touched, 2 MB at a time. Where the kernel always gives them, or never does, the advice changes nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace ett::host {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// Advises MADV_HUGEPAGE on the 2 MB-aligned interior of [block, block + size): the pages not yet touched
// are then faulted in as huge pages. Returns false when the kernel refused (no transparent huge pages) or
// the block has no aligned 2 MB inside; the block works as before either way.
bool advise_huge_pages(void* block, size_t size);

// Faults in every page of [block, block + size), its two halves on two threads (MADV_POPULATE_WRITE, or a
// write of a zero byte per page where the kernel lacks it: only for storage that holds no values yet). The
// first touch of memory is the kernel zeroing each page; an array about to be filled by one thread (a
// vector's resize) pays it at half the wall time. Blocks under 8 MB are left alone.
void fault_in_on_two_threads(void* block, size_t size);

// A vector of `count` value-initialized elements whose pages were faulted in on two threads before the
// zeroing wrote them (fault_in_on_two_threads).
template <typename T>
std::vector<T> faulted_in_vector(size_t count) {
  std::vector<T> out;
  out.reserve(count);
  fault_in_on_two_threads(out.data(), count * sizeof(T));
  out.resize(count);
  return out;
}

// Faults in the pages of a block that one thread fills from its start, a window ahead of the filler, on a
// thread of its own: the filler, when it is on the critical path, no longer takes the first touch of each
// page (on a VM whose host backs fresh memory lazily, about 2 s per GiB). Only MADV_POPULATE_WRITE, which
// changes no byte: the thread never writes the block, so it cannot race with the filler, and it stops where
// the kernel refuses (no such advice, or the block is gone). At most `window` bytes past the filler are
// faulted in and not used.
class FaultAhead {
 public:
  // One for a block of 8 MB or more; nullptr for a smaller one (not worth a thread).
  static std::unique_ptr<FaultAhead> of_block(void* block, size_t size);
  // Tells `ahead`, when there is one, that its filler has written `bytes` of the block now at `data`. A
  // filler whose block moved (a vector that outgrew its room) ends it: the thread never wrote the block.
  static void follow(std::unique_ptr<FaultAhead>& ahead, const void* data, size_t bytes);

  FaultAhead(void* block, size_t size, size_t window = size_t{64} << 20);
  ~FaultAhead();  // stops the thread and joins it
  FaultAhead(const FaultAhead&) = delete;
  FaultAhead& operator=(const FaultAhead&) = delete;
  // The filler has written the block's first `bytes`.
  void filled(size_t bytes);
  const void* block() const { return m_begin; }

 private:
  void run();

  char* const m_begin;
  const size_t m_size;
  const size_t m_window;
  size_t m_told = 0;                 // the filler's side: the last `bytes` it passed on
  std::atomic<size_t> m_filled = 0;  // SIZE_MAX: stop
  std::thread m_thread;              // last: started when the rest is ready
};

}  // namespace ett::host
