// cpuid_frequency.h: the TSC's nominal rate from CPUID leaves 0x15 (TSC/crystal ratio, crystal Hz) and 0x16
// (base MHz), for a machine where no reference timer answers. Hardware-free, so the host tests run it on
// real CPUs' figures.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/tsc_reference.h"

namespace ett::lib {

struct CpuidFrequencyLeaves {
  uint32_t family;
  uint32_t model;              // display model (lib::display_model)
  uint32_t ratio_denominator;  // 0x15 EAX
  uint32_t ratio_numerator;    // 0x15 EBX
  uint32_t crystal_hz;         // 0x15 ECX (0: not enumerated)
  uint32_t base_mhz;           // 0x16 EAX[15:0]
};

// Uncertainties stated with each source: a crystal's nominal rate is within about 100 ppm of its real one;
// the base MHz is rounded to whole MHz and the bus clock behind it may run a little off (0.5 %).
constexpr uint32_t kCrystalUncertaintyPpm = 100;
constexpr uint32_t kBaseMhzUncertaintyPpm = 5000;

struct CpuidFrequency {
  TscEstimate estimate;
  const char* source;  // which leaf (and which crystal) gave it, for the boot log
};

// crystal x numerator / denominator from leaf 0x15 (the crystal from ECX, or for the Intel models that
// leave ECX 0 the crystal their datasheets give: 24 MHz Skylake/Kaby Lake clients, 19.2 MHz Goldmont);
// otherwise the base MHz of leaf 0x16. Fails when neither is reported.
Result<CpuidFrequency> cpuid_tsc_frequency(const CpuidFrequencyLeaves& leaves);

}  // namespace ett::lib
