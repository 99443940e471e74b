// multiboot.h: reads the boot information of either multiboot protocol: v1 (QEMU's -kernel) and v2 (GRUB's
// multiboot2 command on BIOS and UEFI PCs), told apart by the magic in eax.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/boot_info.h"

namespace ett::x86::multiboot {

using boot::BootInfo;

inline constexpr uint32_t kBootloaderMagic = 0x2BADB002;  // in eax at entry (v1)

enum InfoFlag : uint32_t {
  kFlagMemory = 1u << 0,  // mem_lower / mem_upper
  kFlagCmdline = 1u << 2,
  kFlagModules = 1u << 3,
  kFlagMemoryMap = 1u << 6,
  kFlagLoaderName = 1u << 9,
};

// Fails on an unknown magic, a command line longer than boot::kMaxCmdline - 1, a damaged multiboot2 block, or
// no usable memory information.
Result<BootInfo> parse(uint32_t magic, uint32_t info_address);

}  // namespace ett::x86::multiboot
