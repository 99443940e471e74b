// huge_pages.cpp: the `ett` binary's operator new advises transparent huge pages on every large block
// (common/huge_pages.h). glibc serves such a block from a fresh mapping or the untouched top of its heap, so
// the advice usually comes before anything touches it (docs/benchmarks.md, "Memory": what it saves); pages already
// touched keep their size. The block starts on a 2 MB boundary: malloc's blocks start 16 bytes into a
// mapping, whose first and last 2 MB then stayed 4 KB pages (a quarter of an 8 MB block). The block is still
// malloc's: the library's operator delete (free) releases it.
//
// Left out under AddressSanitizer, whose own operator new checks that new and delete match.
#include "common/huge_pages.h"

#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ETT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ETT_ASAN 1
#endif

#ifndef ETT_ASAN

namespace {
constexpr std::size_t kHugeBlock = std::size_t{8} << 20;
}  // namespace

void* operator new(std::size_t size) {
  auto allocate = [](std::size_t size) -> void* {
    if (size < kHugeBlock) return std::malloc(size == 0 ? 1 : size);
    void* block = nullptr;
    return ::posix_memalign(&block, ett::host::kHugePageBytes, size) == 0 ? block : nullptr;
  };
  void* block;
  while (!(block = allocate(size))) {
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
  if (size >= kHugeBlock) ett::host::advise_huge_pages(block, size);
  return block;
}

#endif
