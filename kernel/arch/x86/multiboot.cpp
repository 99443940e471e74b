// multiboot.cpp: copies what the kernel needs out of the multiboot v1 information block, or hands a v2 block
// to lib/multiboot2 (paging is off, so the loader's physical addresses are plain pointers).
#include "arch/x86/multiboot.h"

#include "lib/multiboot2.h"
#include "lib/text.h"

namespace ett::x86::multiboot {

namespace {

struct [[gnu::packed]] RawInfo {
  uint32_t flags;
  uint32_t mem_lower;
  uint32_t mem_upper;
  uint32_t boot_device;
  uint32_t cmdline;
  uint32_t mods_count;
  uint32_t mods_addr;
  uint32_t syms[4];
  uint32_t mmap_length;
  uint32_t mmap_addr;
  uint32_t drives_length;
  uint32_t drives_addr;
  uint32_t config_table;
  uint32_t boot_loader_name;
};
constexpr uint32_t kRawInfoSize = 116;  // the full v1 block, up to the framebuffer fields

struct [[gnu::packed]] RawMmapEntry {
  uint32_t size;  // of the rest of the entry, not counting this field
  uint64_t base;
  uint64_t length;
  uint32_t type;
};

struct [[gnu::packed]] RawModule {
  uint32_t start;
  uint32_t end;
  uint32_t string;
  uint32_t reserved;
};

template <typename T>
const T* at(uint32_t address) {
  return reinterpret_cast<const T*>(address);
}

using boot::add_loader_range;
using boot::kMaxCmdline;
using boot::kMaxLoaderName;

void add_string_range(BootInfo& info, uint32_t address) {
  if (address != 0) add_loader_range(info, address, lib::text_length(at<char>(address)) + 1);
}

Result<BootInfo> parse_v1(uint32_t info_address) {
  const RawInfo& raw = *at<RawInfo>(info_address);

  BootInfo info{};
  info.protocol = 1;
  info.flags = raw.flags;
  add_loader_range(info, info_address, kRawInfoSize);

  if ((raw.flags & kFlagCmdline) && raw.cmdline != 0) {
    if (!lib::copy_text(info.cmdline, kMaxCmdline, at<char>(raw.cmdline)))
      return fail("the kernel command line is longer than 511 characters");
    add_string_range(info, raw.cmdline);
  }

  if ((raw.flags & kFlagLoaderName) && raw.boot_loader_name != 0)
    lib::copy_text(info.loader_name, kMaxLoaderName, at<char>(raw.boot_loader_name));

  if (raw.flags & kFlagModules) {
    add_loader_range(info, raw.mods_addr, uint64_t{raw.mods_count} * sizeof(RawModule));
    const RawModule* modules = at<RawModule>(raw.mods_addr);
    for (uint32_t i = 0; i < raw.mods_count; ++i) {
      add_loader_range(info, modules[i].start, modules[i].end - modules[i].start);
      add_string_range(info, modules[i].string);
    }
  }

  if (raw.flags & kFlagMemory) info.mem_upper_kib = raw.mem_upper;

  if (raw.flags & kFlagMemoryMap) {
    add_loader_range(info, raw.mmap_addr, raw.mmap_length);
    for (uint32_t offset = 0; offset + sizeof(RawMmapEntry) <= raw.mmap_length;) {
      const RawMmapEntry& entry = *at<RawMmapEntry>(raw.mmap_addr + offset);
      boot::add_memory_map_entry(info, entry.base, entry.length, entry.type);
      offset += entry.size + sizeof(entry.size);
    }
    info.ram_from_memory_map = true;
  } else if (raw.flags & kFlagMemory) {
    info.ram[info.ram_count++] = {0x100000, 0x100000 + uint64_t{raw.mem_upper} * 1024};
  }
  if (info.ram_count == 0) return fail("the boot loader reported no usable RAM");
  return info;
}

}  // namespace

Result<BootInfo> parse(uint32_t magic, uint32_t info_address) {
  if (info_address == 0) return fail("multiboot information pointer is null");
  if (magic == kBootloaderMagic) return parse_v1(info_address);
  if (magic == boot::multiboot2::kBootloaderMagic) {
    // The block says its own size in its first word; the parser bounds every read by it.
    const uint8_t* block = at<uint8_t>(info_address);
    return boot::multiboot2::parse(block, info_address, *at<uint32_t>(info_address));
  }
  return fail("not started by a multiboot loader (unknown magic in eax)");
}

}  // namespace ett::x86::multiboot
