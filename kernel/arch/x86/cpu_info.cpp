// cpu_info.cpp: reads vendor, brand string and TSC features through CPUID.
#include "arch/x86/cpu_info.h"

#include "arch/x86/cpu.h"
#include "lib/cpu_models.h"
#include "lib/format.h"

namespace ett::x86 {

namespace {
void store_le32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
}  // namespace

CpuInfo read_cpu_info() {
  CpuInfo info{};
  info.has_cpuid = has_cpuid();
  if (!info.has_cpuid) return info;
  const CpuidRegs leaf0 = cpuid(kCpuidVendor);
  store_le32(info.vendor + 0, leaf0.ebx);
  store_le32(info.vendor + 4, leaf0.edx);
  store_le32(info.vendor + 8, leaf0.ecx);

  if (leaf0.eax >= kCpuidFeatures) {
    const CpuidRegs features = cpuid(kCpuidFeatures);
    info.has_tsc = features.edx & kFeatureTsc;
    info.has_sse2 = features.edx & kFeatureSse2;
    info.hypervisor = features.ecx & kFeatureHypervisor;
    const uint32_t family = (features.eax >> 8) & 0xF;
    info.family = family;
    info.model = lib::display_model(features.eax);
    const bool intel = leaf0.ebx == 0x756E6547 && leaf0.edx == 0x49656E69 && leaf0.ecx == 0x6C65746E;
    info.has_smi_count = lib::has_smi_count_msr(intel, family, info.model) && (features.edx & kFeatureMsr);
  }
  if (leaf0.eax >= kCpuidTscCrystal) {
    const CpuidRegs leaf15 = cpuid(kCpuidTscCrystal);
    info.tsc_ratio_denominator = leaf15.eax;
    info.tsc_ratio_numerator = leaf15.ebx;
    info.crystal_hz = leaf15.ecx;
  }
  if (leaf0.eax >= kCpuidFrequency) info.base_mhz = cpuid(kCpuidFrequency).eax & 0xFFFF;

  const uint32_t max_extended = cpuid(kCpuidMaxExtended).eax;
  if (max_extended >= kCpuidBrand0 + 2) {
    char raw[48];
    for (uint32_t i = 0; i < 3; ++i) {
      const CpuidRegs r = cpuid(kCpuidBrand0 + i);
      store_le32(raw + 16 * i + 0, r.eax);
      store_le32(raw + 16 * i + 4, r.ebx);
      store_le32(raw + 16 * i + 8, r.ecx);
      store_le32(raw + 16 * i + 12, r.edx);
    }
    raw[47] = '\0';
    const char* start = raw;
    while (*start == ' ') ++start;
    for (int i = 0; start[i] != '\0'; ++i) info.brand[i] = start[i];
  }
  if (max_extended >= kCpuidPowerManagement)
    info.invariant_tsc = cpuid(kCpuidPowerManagement).edx & kInvariantTsc;
  return info;
}

const char* unsupported_cpu_reason(const CpuInfo& cpu) {
  static char reason[160];
  if (!cpu.has_cpuid)
    return "this CPU has no CPUID instruction (a 386 or early 486) and so no time-stamp counter: "
           "ETT needs a Pentium or newer";
  if (cpu.has_tsc) return nullptr;
  lib::format(reason, sizeof(reason),
              "this CPU (\"%s\", family %u) has no time-stamp counter (CPUID.1:EDX bit 4 clear): ETT needs a "
              "Pentium or newer",
              cpu.vendor, cpu.family);
  return reason;
}

}  // namespace ett::x86
