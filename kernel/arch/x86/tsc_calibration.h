// tsc_calibration.h: measures the TSC rate against every reference timer the machine has (PIT, and through
// the ACPI tables the PM timer and the HPET) and picks one (lib/tsc_reference.h: HPET > PM timer > PIT).
#pragma once

#include <stdint.h>

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
};

// Fails only when no reference works. `has_lfence`: the CPU has SSE2, so the counter reads can be fenced.
// `loader` is the boot loader's copy of the ACPI RSDP (may be empty): used before searching memory for one.
Result<TscCalibration> calibrate_tsc(bool has_lfence, const acpi::LoaderRsdp& loader);

}  // namespace ett::x86
