// cpu_models.cpp: the model list behind has_smi_count_msr.
#include "lib/cpu_models.h"

namespace ett::lib {

namespace {

// Intel family-6 models with MSR_SMI_COUNT (Intel SDM vol. 4, the MSR tables of each microarchitecture).
constexpr uint8_t kSmiCountModels[] = {
    0x1A, 0x1E, 0x1F, 0x2E,                    // Nehalem
    0x25, 0x2C, 0x2F,                          // Westmere
    0x2A, 0x2D, 0x3A, 0x3E,                    // Sandy Bridge, Ivy Bridge
    0x3C, 0x3F, 0x45, 0x46,                    // Haswell
    0x3D, 0x47, 0x4F, 0x56,                    // Broadwell
    0x4E, 0x5E, 0x55, 0x8E, 0x9E, 0xA5, 0xA6,  // Skylake, Kaby/Coffee/Comet Lake, Skylake-X
    0x66, 0x6A, 0x6C, 0x7D, 0x7E,              // Cannon Lake, Ice Lake
    0x8C, 0x8D, 0xA7, 0x8F, 0xCF,              // Tiger Lake, Rocket Lake, Sapphire/Emerald Rapids
    0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0xAA, 0xAC,  // Alder Lake, Raptor Lake, Meteor Lake
    0x37, 0x4D, 0x4C,                          // Silvermont, Airmont
    0x5C, 0x5F, 0x7A, 0x86, 0x96, 0x9C,        // Goldmont, Goldmont Plus, Tremont
    0x57, 0x85,                                // Xeon Phi (Knights Landing, Knights Mill)
};

}  // namespace

uint32_t display_model(uint32_t cpuid1_eax) {
  const uint32_t family = (cpuid1_eax >> 8) & 0xF;
  uint32_t model = (cpuid1_eax >> 4) & 0xF;
  if (family == 6 || family == 15) model |= ((cpuid1_eax >> 16) & 0xF) << 4;
  return model;
}

bool has_smi_count_msr(bool intel, uint32_t family, uint32_t model) {
  if (!intel || family != 6) return false;
  for (const uint8_t listed : kSmiCountModels)
    if (listed == model) return true;
  return false;
}

}  // namespace ett::lib
