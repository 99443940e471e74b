// multiboot.h: reads the multiboot v1 information block: flags, command line, memory map, modules.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/memory_map.h"

namespace ett::x86::multiboot {

inline constexpr uint32_t kBootloaderMagic = 0x2BADB002;  // in eax at entry

enum InfoFlag : uint32_t {
  kFlagMemory = 1u << 0,  // mem_lower / mem_upper
  kFlagCmdline = 1u << 2,
  kFlagModules = 1u << 3,
  kFlagMemoryMap = 1u << 6,
  kFlagLoaderName = 1u << 9,
};

inline constexpr uint32_t kMaxCmdline = 512;
inline constexpr uint32_t kMaxRamRanges = 64;
inline constexpr uint32_t kMaxLoaderRanges = 32;
inline constexpr uint32_t kMaxLoaderName = 64;

// Everything the kernel needs from the loader, copied out of the loader's memory at once.
struct BootInfo {
  uint32_t flags;
  uint32_t mem_upper_kib;             // RAM above 1 MiB (valid with kFlagMemory)
  char cmdline[kMaxCmdline];          // as the loader gave it ("" if none): see config::kernel_arguments
  char loader_name[kMaxLoaderName];   // "qemu", "GRUB 2.06", ...; "" if none (truncated if longer)
  lib::PhysRange ram[kMaxRamRanges];  // available RAM (memory map type 1, or mem_upper without a map)
  uint32_t ram_count;
  bool ram_from_memory_map;
  // Memory the loader's own structures occupy (info block, command line, map, modules): never a buffer.
  lib::PhysRange loader[kMaxLoaderRanges];
  uint32_t loader_count;
};

// Fails on a wrong magic, a command line longer than kMaxCmdline - 1, or no usable memory information.
Result<BootInfo> parse(uint32_t magic, uint32_t info_address);

}  // namespace ett::x86::multiboot
