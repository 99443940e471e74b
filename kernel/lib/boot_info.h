// boot_info.h: what the kernel keeps from its boot loader (multiboot v1 or v2): command line, RAM, the
// loader's own memory, the framebuffer and the loader's copy of the ACPI RSDP. Plain data, copied out at
// entry.
#pragma once

#include <stdint.h>

#include "lib/memory_map.h"

namespace ett::boot {

inline constexpr uint32_t kMaxCmdline = 512;
inline constexpr uint32_t kMaxRamRanges = 64;
inline constexpr uint32_t kMaxLoaderRanges = 32;
inline constexpr uint32_t kMaxReservedRanges = 64;
inline constexpr uint32_t kMaxLoaderName = 64;
inline constexpr uint32_t kMaxRsdpCopy = 64;  // an ACPI 2.0+ RSDP is 36 bytes

enum class FramebufferKind : uint8_t {
  None,     // the loader said nothing: a BIOS boot in VGA text mode
  VgaText,  // EGA/VGA text mode at 0xB8000
  Rgb,      // a linear framebuffer with direct colour (UEFI GOP, VBE)
  Indexed,  // a palette framebuffer: not drawn on
};

struct Framebuffer {
  FramebufferKind kind;
  uint64_t address;
  uint32_t pitch;  // bytes per line
  uint32_t width;
  uint32_t height;
  uint8_t bpp;
  uint8_t red_position, red_size;
  uint8_t green_position, green_size;
  uint8_t blue_position, blue_size;
};

struct BootInfo {
  uint32_t protocol;                  // 1 or 2 (multiboot version)
  uint32_t flags;                     // multiboot v1 flags (0 for v2)
  uint32_t mem_upper_kib;             // RAM above 1 MiB, when the loader gave it
  char cmdline[kMaxCmdline];          // as the loader gave it ("" if none): see config::kernel_arguments
  char loader_name[kMaxLoaderName];   // "qemu", "GRUB 2.06", ...; "" if none (truncated if longer)
  lib::PhysRange ram[kMaxRamRanges];  // available RAM (memory map type 1, or mem_upper without a map)
  uint32_t ram_count;
  bool ram_from_memory_map;
  // Memory the loader's own structures occupy (info block, command line, map, modules): never a buffer.
  lib::PhysRange loader[kMaxLoaderRanges];
  uint32_t loader_count;
  // Every memory map entry that is not available RAM (reserved, ACPI reclaimable, ACPI NVS, bad, persistent):
  // firmware may use it (UEFI parks cores in reserved memory), so it is excluded even where an available
  // entry overlaps it. A map with more such entries than fit sets reserved_overflow.
  lib::PhysRange reserved[kMaxReservedRanges];
  uint32_t reserved_count;
  bool reserved_overflow;
  Framebuffer framebuffer;
  uint8_t rsdp[kMaxRsdpCopy];  // the loader's copy of the RSDP (multiboot2 ACPI tags); rsdp_length 0: none
  uint32_t rsdp_length;
};

inline constexpr uint32_t kMemoryMapAvailable = 1;  // the memory map type of usable RAM (both protocols)

// One memory map entry (type 1: RAM; any other type: reserved); empty or wrapping entries are dropped.
inline void add_memory_map_entry(BootInfo& info, uint64_t base, uint64_t length, uint32_t type) {
  if (length == 0 || base + length < base) return;
  if (type == kMemoryMapAvailable) {
    if (info.ram_count < kMaxRamRanges) info.ram[info.ram_count++] = {base, base + length};
  } else if (info.reserved_count < kMaxReservedRanges) {
    info.reserved[info.reserved_count++] = {base, base + length};
  } else {
    info.reserved_overflow = true;
  }
}

inline void add_loader_range(BootInfo& info, uint64_t start, uint64_t size) {
  if (info.loader_count < kMaxLoaderRanges && size > 0)
    info.loader[info.loader_count++] = {start, start + size};
}

}  // namespace ett::boot
