// huge_pages.cpp: madvise(MADV_HUGEPAGE) on the aligned interior of a block.
#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace ett::host {

bool advise_huge_pages(void* block, size_t size) {
  const auto begin = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t last = (begin + size) & ~(kHugePageBytes - 1);
  if (last <= first) return false;
  return ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0;
}

}  // namespace ett::host
