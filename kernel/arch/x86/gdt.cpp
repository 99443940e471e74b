// gdt.cpp: the flat GDT in the kernel's .data, lgdt, and the segment reloads that make the CPU use it.
#include "arch/x86/gdt.h"

namespace ett::x86 {

namespace {

// One 8-byte descriptor. Flat segments: base 0, limit 0xFFFFF in 4 KiB units (4 GiB). The x86-64 kernel's
// code segment is a 64-bit one (L set, D/B clear); its data segment is as in 32-bit mode (ignored but
// loaded).
constexpr uint64_t kGranularity4K = 1u << 3;  // flags nibble: G
constexpr uint64_t kSize32 = 1u << 2;         // flags nibble: D/B
constexpr uint64_t kLong = 1u << 1;           // flags nibble: L (64-bit code)
constexpr uint64_t descriptor(uint8_t access, uint64_t flags = kGranularity4K | kSize32) {
  constexpr uint64_t kLimitLow = 0xFFFF;
  constexpr uint64_t kLimitHigh = 0xF;
  return kLimitLow | (uint64_t{access} << 40) | (kLimitHigh << 48) | (flags << 52);
}

enum Access : uint8_t {
  kPresent = 1u << 7,
  kCodeOrData = 1u << 4,  // S: not a system descriptor
  kExecutable = 1u << 3,
  kReadWrite = 1u << 1,  // readable code / writable data
  kAccessed = 1u << 0,   // set already, so that the CPU never writes the table
};

alignas(8) constexpr uint64_t kTable[] = {
    0,
#ifdef __x86_64__
    descriptor(kPresent | kCodeOrData | kExecutable | kReadWrite | kAccessed, kGranularity4K | kLong),
#else
    descriptor(kPresent | kCodeOrData | kExecutable | kReadWrite | kAccessed),
#endif
    descriptor(kPresent | kCodeOrData | kReadWrite | kAccessed),
};
static_assert(sizeof(kTable) == Gdt::kData + 8, "one descriptor per selector");

}  // namespace

void Gdt::load() {
  struct [[gnu::packed]] {
    uint16_t limit;
    uintptr_t base;
  } pointer{sizeof(kTable) - 1, reinterpret_cast<uintptr_t>(kTable)};
#ifdef __x86_64__
  // No far jump to an immediate in 64-bit mode: a far return pops the new cs:rip.
  uint64_t scratch;
  asm volatile(
      "lgdt %1\n\t"
      "pushq %2\n\t"
      "leaq 1f(%%rip), %0\n\t"
      "pushq %0\n\t"
      "lretq\n"
      "1:\n\t"
      "mov %3, %%ds\n\t"
      "mov %3, %%es\n\t"
      "mov %3, %%fs\n\t"
      "mov %3, %%gs\n\t"
      "mov %3, %%ss"
      : "=&r"(scratch)
      : "m"(pointer), "i"(kCode), "r"(static_cast<uint32_t>(kData))
      : "memory");
#else
  asm volatile(
      "lgdt %0\n\t"
      "ljmp %1, $1f\n"
      "1:\n\t"
      "mov %2, %%ds\n\t"
      "mov %2, %%es\n\t"
      "mov %2, %%fs\n\t"
      "mov %2, %%gs\n\t"
      "mov %2, %%ss"
      :
      : "m"(pointer), "i"(kCode), "r"(static_cast<uint32_t>(kData))
      : "memory");
#endif
}

}  // namespace ett::x86
