// cpu.h: the few CPU instructions the kernel needs: TSC reads, the interrupt flag, hlt, pause, cpuid.
#pragma once

#include <stdint.h>

namespace ett::x86 {

[[gnu::always_inline]] inline uint64_t rdtsc() {
  uint32_t low, high;
  asm volatile("rdtsc" : "=a"(low), "=d"(high));
  return (static_cast<uint64_t>(high) << 32) | low;
}

// RDTSC that cannot execute before earlier loads complete: the timestamp is taken after the probe read.
// lfence needs SSE2 (CPUID.1:EDX[26]); callers check has_sse2() first.
[[gnu::always_inline]] inline uint64_t rdtsc_after_loads() {
  uint32_t low, high;
  asm volatile("lfence\n\trdtsc" : "=a"(low), "=d"(high) : : "memory");
  return (static_cast<uint64_t>(high) << 32) | low;
}

// RDTSC that neither earlier nor later instructions pass: brackets a device read on both sides (SSE2 CPUs).
[[gnu::always_inline]] inline uint64_t rdtsc_fenced() {
  uint32_t low, high;
  asm volatile("lfence\n\trdtsc\n\tlfence" : "=a"(low), "=d"(high) : : "memory");
  return (static_cast<uint64_t>(high) << 32) | low;
}

inline void cli() {
  asm volatile("cli" : : : "memory");
}
inline void sti() {
  asm volatile("sti" : : : "memory");
}
inline void hlt() {
  asm volatile("hlt" : : : "memory");
}
inline void pause() {
  asm volatile("pause");
}

[[noreturn]] inline void halt_forever() {
  for (;;) {
    cli();
    hlt();
  }
}

// The code segment selector the loader left us in (multiboot: flat 4 GiB, value unspecified).
inline uint16_t code_segment() {
  uint16_t selector;
  asm volatile("mov %%cs, %0" : "=r"(selector));
  return selector;
}

inline void load_idt(const void* table, uint16_t size) {
  struct [[gnu::packed]] {
    uint16_t limit;
    uintptr_t base;
  } descriptor{static_cast<uint16_t>(size - 1), reinterpret_cast<uintptr_t>(table)};
  asm volatile("lidt %0" : : "m"(descriptor) : "memory");
}

// Whether CPUID exists: the EFLAGS ID bit (21) can be toggled. Early 486s have no CPUID and fault on it.
inline bool has_cpuid() {
#ifdef __x86_64__
  return true;  // every CPU with long mode has CPUID
#else
  constexpr uint32_t kEflagsId = 1u << 21;
  uint32_t before, after;
  asm volatile(
      "pushfl\n\t"
      "pushfl\n\t"
      "popl %0\n\t"
      "movl %0, %1\n\t"
      "xorl %2, %1\n\t"
      "pushl %1\n\t"
      "popfl\n\t"
      "pushfl\n\t"
      "popl %1\n\t"
      "popfl"
      : "=&r"(before), "=&r"(after)
      : "i"(kEflagsId)
      : "cc");
  return ((before ^ after) & kEflagsId) != 0;
#endif
}

struct CpuidRegs {
  uint32_t eax, ebx, ecx, edx;
};

inline CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf = 0) {
  CpuidRegs r;
  asm volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(subleaf));
  return r;
}

enum CpuidLeaf : uint32_t {
  kCpuidVendor = 0x0,
  kCpuidFeatures = 0x1,
  kCpuidTscCrystal = 0x15,  // EAX/EBX: TSC to crystal ratio, ECX: crystal Hz
  kCpuidFrequency = 0x16,   // EAX: base (nominal) MHz
  kCpuidMaxExtended = 0x80000000,
  kCpuidBrand0 = 0x80000002,  // ... 0x80000004: 48 bytes of brand string
  kCpuidPowerManagement = 0x80000007,
};

enum CpuidFeatureEdx : uint32_t {
  kFeatureTsc = 1u << 4,
  kFeatureMsr = 1u << 5,
  kFeatureApic = 1u << 9,
  kFeatureSse2 = 1u << 26,
};

enum CpuidFeatureEcx : uint32_t {
  kFeatureHypervisor = 1u << 31,
};

// Model-specific registers the kernel reads, through read_msr_safe (arch/x86/exceptions.h): an MSR the CPU
// does not have raises #GP.
enum Msr : uint32_t {
  kMsrSmiCount = 0x34,   // Intel Nehalem and later: SMIs since reset (low 32 bits)
  kMsrApicBase = 0x1B,   // IA32_APIC_BASE: the local APIC's address and mode
  kMsrX2ApicId = 0x802,  // x2APIC mode: this CPU's APIC ID
  kMsrX2ApicIcr = 0x830,
};

// Only for an MSR known to exist (read first through read_msr_safe).
inline void wrmsr(uint32_t msr, uint64_t value) {
  asm volatile("wrmsr"
               :
               : "c"(msr), "a"(static_cast<uint32_t>(value)), "d"(static_cast<uint32_t>(value >> 32))
               : "memory");
}

enum CpuidPowerManagementEdx : uint32_t {
  kInvariantTsc = 1u << 8,
};

}  // namespace ett::x86
