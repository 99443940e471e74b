// multiboot2.h: reads a multiboot2 boot information block (a list of tags) into BootInfo. Hardware-free: it
// gets the block's bytes, so the host tests feed it made-up, truncated and odd blocks.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/boot_info.h"

namespace ett::boot::multiboot2 {

inline constexpr uint32_t kBootloaderMagic = 0x36D76289;  // in eax at entry

// Tag types of the specification (3.6) that the kernel reads.
enum TagType : uint32_t {
  kTagEnd = 0,
  kTagCmdline = 1,
  kTagLoaderName = 2,
  kTagModule = 3,
  kTagBasicMemory = 4,
  kTagMemoryMap = 6,
  kTagFramebuffer = 8,
  kTagAcpiOld = 14,  // a copy of the ACPI 1.0 RSDP
  kTagAcpiNew = 15,  // a copy of the ACPI 2.0+ RSDP (XSDT)
};

// Byte offsets inside the block and inside tags.
enum Layout : uint32_t {
  kBlockHeader = 8,  // u32 total_size, u32 reserved
  kTagHeader = 8,    // u32 type, u32 size (size counts the header; the next tag starts 8-aligned)
  kModuleStart = 8,
  kModuleEnd = 12,
  kModuleString = 16,
  kBasicMemoryUpper = 12,
  kMmapEntrySize = 8,
  kMmapEntries = 16,
  kFramebufferAddress = 8,
  kFramebufferPitch = 16,
  kFramebufferWidth = 20,
  kFramebufferHeight = 24,
  kFramebufferBpp = 28,
  kFramebufferType = 29,
  kFramebufferColorInfo = 32,  // after a u16 reserved (GRUB's layout): red/green/blue position and size
  kFramebufferRgbEnd = 38,
};

// Largest block accepted: a damaged total_size is caught before the walk reads far.
inline constexpr uint32_t kMaxBlockSize = 1u << 20;

// `block` points at the information block (total_size first) whose physical address is `address`; at most
// `readable` bytes may be read from it. Fails on a block that is truncated, too large, whose tags run past
// its end or have no end tag, on a command line longer than kMaxCmdline - 1, or without usable RAM.
Result<BootInfo> parse(const uint8_t* block, uint64_t address, uint32_t readable);

}  // namespace ett::boot::multiboot2
