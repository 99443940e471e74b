// tsc_calibration.h: measures the TSC rate against every reference timer the machine has (PIT, and through
// the ACPI tables the PM timer and the HPET) and picks one (lib/tsc_reference.h: HPET > PM timer > PIT).
#pragma once

#include <stdint.h>

#include "arch/x86/cpu_info.h"
#include "ett/result.h"
#include "ett/trace_format.h"
#include "lib/acpi_tables.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

struct TscCalibration {
  uint64_t hz;               // the chosen reference's rate
  uint32_t uncertainty_ppm;  // and its uncertainty
  format::TscMethod method;
  lib::ReferenceResult results[lib::kReferenceCount];  // indexed by lib::Reference, for the boot log
  lib::ReferenceChoice choice;
  acpi::Timers timers;  // where the PM timer and the HPET are (or why not)
  uint32_t hpet_period_fs;
  // The CPU's nominal rate (CPUID 0x15/0x16), or why there is none: used when no reference works
  // (method Cpuid); otherwise it only bounds the PIT's wait.
  lib::ReferenceResult nominal;
  const char* nominal_source;  // which CPUID leaf, when nominal has no problem
};

// Fails only when no reference works and CPUID gives no nominal rate. `cpu.has_sse2`: the counter reads can
// be fenced. `loader` is the boot loader's copy of the ACPI RSDP (may be empty): used before searching
// memory for one.
Result<TscCalibration> calibrate_tsc(const CpuInfo& cpu, const acpi::LoaderRsdp& loader);

}  // namespace ett::x86
