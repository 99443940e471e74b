// cpu_info.h: what CPUID says about this processor: vendor, brand, and the TSC-related features.
#pragma once

#include <stdint.h>

namespace ett::x86 {

struct CpuInfo {
  char vendor[16];  // leaf 0, NUL-terminated ("GenuineIntel")
  char brand[48];   // leaves 0x80000002-4, NUL-terminated, leading spaces dropped; empty if not reported
  bool has_cpuid;   // early 486s have no CPUID instruction: everything below is then false
  uint32_t family;  // CPUID.1:EAX[11:8] (4: 486, 5: Pentium, 6: Pentium Pro and later, 15: Pentium 4)
  uint32_t model;   // with the extended model (lib::display_model)
  bool has_tsc;
  bool has_sse2;       // lfence is available
  bool invariant_tsc;  // the TSC runs at a constant rate in every P-/C-state
  bool hypervisor;     // CPUID.1:ECX[31]: running under a hypervisor or emulator
  // MSR 0x34 (MSR_SMI_COUNT) should exist: GenuineIntel family 6 of a listed model (lib/cpu_models.h) with
  // RDMSR. Read only through read_msr_safe (arch/x86/exceptions.h): a hypervisor may still fault on it.
  bool has_smi_count;
  // CPUID leaves 0x15 and 0x16 (0 when the CPU does not report them): the TSC's nominal rate without a timer.
  uint32_t tsc_ratio_denominator;  // 0x15 EAX
  uint32_t tsc_ratio_numerator;    // 0x15 EBX
  uint32_t crystal_hz;             // 0x15 ECX (0: not enumerated)
  uint32_t base_mhz;               // 0x16 EAX[15:0]
};

CpuInfo read_cpu_info();

// Why the capture cannot run on this CPU (no CPUID, or no TSC: a 486 or older), in one line naming what was
// found; nullptr when it can. Checked before the first rdtsc, which would fault on such a CPU.
const char* unsupported_cpu_reason(const CpuInfo& cpu);

}  // namespace ett::x86
