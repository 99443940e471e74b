// cpuid_frequency.cpp: TSC rate = crystal x (0x15 EBX / EAX), or the 0x16 base frequency.
#include "lib/cpuid_frequency.h"

namespace ett::lib {

namespace {

// Intel models whose leaf 0x15 leaves the crystal's rate (ECX) 0, and that rate.
uint32_t known_crystal_hz(uint32_t family, uint32_t model) {
  if (family != 6) return 0;
  switch (model) {
    case 0x4E:  // Skylake mobile
    case 0x5E:  // Skylake desktop
    case 0x8E:  // Kaby Lake / Coffee Lake mobile
    case 0x9E:  // Kaby Lake / Coffee Lake desktop
      return 24'000'000;
    case 0x5C:  // Goldmont (Apollo Lake)
      return 19'200'000;
    default:
      return 0;
  }
}

}  // namespace

Result<CpuidFrequency> cpuid_tsc_frequency(const CpuidFrequencyLeaves& leaves) {
  if (leaves.ratio_denominator != 0 && leaves.ratio_numerator != 0) {
    const bool enumerated = leaves.crystal_hz != 0;
    const uint32_t crystal = enumerated ? leaves.crystal_hz : known_crystal_hz(leaves.family, leaves.model);
    if (crystal != 0)
      return CpuidFrequency{
          {mul_div(crystal, leaves.ratio_numerator, leaves.ratio_denominator), kCrystalUncertaintyPpm},
          enumerated ? "CPUID 0x15 (crystal x TSC ratio)" : "CPUID 0x15 (TSC ratio x this model's crystal)"};
  }
  if (leaves.base_mhz != 0)
    return CpuidFrequency{{uint64_t{leaves.base_mhz} * 1'000'000, kBaseMhzUncertaintyPpm},
                          "CPUID 0x16 (base frequency)"};
  return fail("CPUID reports no TSC frequency (no leaf 0x15 crystal ratio, no leaf 0x16 base frequency)");
}

}  // namespace ett::lib
