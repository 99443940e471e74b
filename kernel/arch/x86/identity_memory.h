// identity_memory.h: physical memory as the ACPI parser reads it in this kernel: paging is off, so a physical
// address below 4 GiB is a pointer.
#pragma once

#include <stdint.h>

#include "lib/acpi_tables.h"

namespace ett::x86 {

class IdentityMemory final : public acpi::PhysicalMemory {
 public:
  const uint8_t* map(uint64_t address, uint32_t length) const override {
    if (address == 0 || address + length > 0x100000000ull) return nullptr;
    return reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(address));
  }
};

}  // namespace ett::x86
