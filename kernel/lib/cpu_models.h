// cpu_models.h: which Intel family-6 models have MSR_SMI_COUNT (0x34), by explicit model number.
// Hardware-free, so the host tests check the list.
#pragma once

#include <stdint.h>

namespace ett::lib {

// The display model of CPUID.1:EAX: the model field with the extended model above it (families 6 and 15).
uint32_t display_model(uint32_t cpuid1_eax);

// Whether an Intel CPU of `family`/`model` has MSR_SMI_COUNT: Nehalem and the big cores after it, and the
// Atoms from Silvermont on (the list turbostat reads the counter on). Bonnell and Saltwell Atoms (0x1C, 0x26,
// 0x27, 0x35, 0x36) share model numbers above Nehalem's 0x1A but have no such MSR; a model not listed is
// treated as not having it.
bool has_smi_count_msr(bool intel, uint32_t family, uint32_t model);

}  // namespace ett::lib
