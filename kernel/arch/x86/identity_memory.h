// identity_memory.h: physical memory as the ACPI parser reads it in this kernel: a physical address is a
// pointer below 4 GiB (i686 kernel, paging off) or below the end of the identity map (x86-64 kernel).
#pragma once

#include <stdint.h>

#include "arch/x86/buffer_window.h"
#include "lib/acpi_tables.h"

namespace ett::x86 {

class IdentityMemory final : public acpi::PhysicalMemory {
 public:
  const uint8_t* map(uint64_t address, uint32_t length) const override {
    if (address == 0 || address + length > identity_map_limit()) return nullptr;
    return reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(address));
  }
};

}  // namespace ett::x86
