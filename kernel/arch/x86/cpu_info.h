// cpu_info.h: what CPUID says about this processor: vendor, brand, and the TSC-related features.
#pragma once

namespace ett::x86 {

struct CpuInfo {
  char vendor[16];  // leaf 0, NUL-terminated ("GenuineIntel")
  char brand[48];   // leaves 0x80000002-4, NUL-terminated, leading spaces dropped; empty if not reported
  bool has_tsc;
  bool has_sse2;       // lfence is available
  bool invariant_tsc;  // the TSC runs at a constant rate in every P-/C-state
  bool hypervisor;     // CPUID.1:ECX[31]: running under a hypervisor or emulator
  // MSR 0x34 (MSR_SMI_COUNT) exists: GenuineIntel, family 6, model >= 0x1A (Nehalem and later), RDMSR
  // available, and no hypervisor (emulators such as QEMU fault on unknown MSRs; no handler recovers here).
  bool has_smi_count;
};

CpuInfo read_cpu_info();

}  // namespace ett::x86
