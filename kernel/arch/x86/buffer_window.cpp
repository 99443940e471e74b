// buffer_window.cpp: fills the buffer window's page directories and hooks them into the boot page tables.
#include "arch/x86/buffer_window.h"

#ifdef __x86_64__

extern "C" uint64_t ett_pml4[512];           // boot/multiboot64.S
extern "C" uint64_t ett_identity_map_limit;  // boot/multiboot64.S

namespace ett::x86 {

namespace {

enum PageBits : uint64_t {
  kPresent = 1u << 0,
  kWritable = 1u << 1,
  kLarge = 1u << 7,  // a 2 MiB page in a page directory
};
constexpr size_t kEntries = 512;
constexpr uint64_t kWindowPml4Index = kBufferWindowBase >> 39;

alignas(4096) uint64_t g_window_pdpt[kEntries];
alignas(4096) uint64_t g_window_directories[kBufferWindowDirectories][kEntries];

// The kernel image is identity mapped: a table's address is its physical address.
uint64_t physical(const void* table) {
  return reinterpret_cast<uintptr_t>(table);
}

}  // namespace

uint64_t map_buffer_window(const lib::PhysRange* pieces, size_t count) {
  constexpr size_t kMaxPages = kBufferWindowDirectories * kEntries;
  for (auto& directory : g_window_directories)
    for (auto& entry : directory) entry = 0;
  for (auto& entry : g_window_pdpt) entry = 0;
  size_t page = 0;
  for (size_t i = 0; i < count; ++i)
    for (uint64_t address = pieces[i].start; address + kBufferPageBytes <= pieces[i].end && page < kMaxPages;
         address += kBufferPageBytes, ++page)
      g_window_directories[page / kEntries][page % kEntries] = address | kPresent | kWritable | kLarge;
  for (size_t d = 0; d * kEntries < page; ++d)
    g_window_pdpt[d] = physical(g_window_directories[d]) | kPresent | kWritable;
  ett_pml4[kWindowPml4Index] = physical(g_window_pdpt) | kPresent | kWritable;
  // Reloading CR3 flushes every TLB entry of an earlier window.
  uint64_t cr3;
  asm volatile("mov %%cr3, %0\n\tmov %0, %%cr3" : "=r"(cr3) : : "memory");
  return uint64_t{page} * kBufferPageBytes;
}

size_t check_buffer_window(const lib::PhysRange* pieces, size_t count, uint64_t mapped_bytes) {
  uint64_t offset = 0;  // of the piece's start in the window
  for (size_t i = 0; i < count && offset < mapped_bytes; ++i) {
    uint64_t size = pieces[i].size() & ~(kBufferPageBytes - 1);
    if (size > mapped_bytes - offset) size = mapped_bytes - offset;
    const uint64_t ends[] = {0, size - sizeof(uint64_t)};
    for (const uint64_t at : ends) {
      const uint64_t physical_address = pieces[i].start + at;
      if (physical_address + sizeof(uint64_t) > ett_identity_map_limit) continue;
      const uint64_t marker = physical_address ^ 0x5EA7'C0DE'5EA7'C0DEull;
      *reinterpret_cast<volatile uint64_t*>(kBufferWindowBase + offset + at) = marker;
      if (*reinterpret_cast<volatile uint64_t*>(physical_address) != marker) return i + 1;
    }
    offset += size;
  }
  return 0;
}

uint64_t identity_map_limit() {
  return ett_identity_map_limit;
}

}  // namespace ett::x86

#endif
