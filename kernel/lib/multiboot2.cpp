// multiboot2.cpp: walks the multiboot2 tags with every length checked against the block's end.
#include "lib/multiboot2.h"

#include "lib/text.h"

namespace ett::boot::multiboot2 {

namespace {

// The block is only 8-byte aligned at best and the tests hand in arbitrary buffers: read byte by byte.
uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t le64(const uint8_t* p) {
  return uint64_t{le32(p)} | uint64_t{le32(p + 4)} << 32;
}

constexpr uint32_t kMmapEntryMinimum = 24;  // u64 base, u64 length, u32 type, u32 reserved
constexpr uint8_t kFramebufferIndexed = 0;
constexpr uint8_t kFramebufferRgb = 1;
constexpr uint8_t kFramebufferEgaText = 2;

// A tag's text (command line, loader name) must end inside the tag.
bool tag_text(const uint8_t* tag, uint32_t size, const char*& text) {
  for (uint32_t i = kTagHeader; i < size; ++i)
    if (tag[i] == 0) {
      text = reinterpret_cast<const char*>(tag + kTagHeader);
      return true;
    }
  return false;
}

Status read_memory_map(const uint8_t* tag, uint32_t size, BootInfo& info) {
  if (size < kMmapEntries) return fail("multiboot2: the memory map tag is shorter than its header");
  const uint32_t entry_size = le32(tag + kMmapEntrySize);
  if (entry_size < kMmapEntryMinimum || entry_size % 8 != 0)
    return fail("multiboot2: the memory map's entry size is not a multiple of 8 of at least 24");
  for (uint32_t offset = kMmapEntries; offset + entry_size <= size; offset += entry_size) {
    const uint8_t* entry = tag + offset;
    const uint64_t base = le64(entry);
    const uint64_t length = le64(entry + 8);
    boot::add_memory_map_entry(info, base, length, le32(entry + 16));
  }
  info.ram_from_memory_map = true;
  return {};
}

void read_framebuffer(const uint8_t* tag, uint32_t size, BootInfo& info) {
  if (size < kFramebufferColorInfo) return;  // too short to describe one: as if there were none
  Framebuffer fb{};
  fb.address = le64(tag + kFramebufferAddress);
  fb.pitch = le32(tag + kFramebufferPitch);
  fb.width = le32(tag + kFramebufferWidth);
  fb.height = le32(tag + kFramebufferHeight);
  fb.bpp = tag[kFramebufferBpp];
  switch (tag[kFramebufferType]) {
    case kFramebufferEgaText:
      fb.kind = FramebufferKind::VgaText;
      break;
    case kFramebufferIndexed:
      fb.kind = FramebufferKind::Indexed;
      break;
    case kFramebufferRgb:
      if (size < kFramebufferRgbEnd) return;
      fb.kind = FramebufferKind::Rgb;
      fb.red_position = tag[kFramebufferColorInfo];
      fb.red_size = tag[kFramebufferColorInfo + 1];
      fb.green_position = tag[kFramebufferColorInfo + 2];
      fb.green_size = tag[kFramebufferColorInfo + 3];
      fb.blue_position = tag[kFramebufferColorInfo + 4];
      fb.blue_size = tag[kFramebufferColorInfo + 5];
      break;
    default:
      return;  // a type this kernel does not know
  }
  info.framebuffer = fb;
}

// The new (ACPI 2.0+) copy wins over the old one, whatever their order.
void read_rsdp(const uint8_t* tag, uint32_t size, bool is_new, bool& have_new, BootInfo& info) {
  if (have_new && !is_new) return;
  uint32_t length = size - kTagHeader;
  if (length > kMaxRsdpCopy) length = kMaxRsdpCopy;
  for (uint32_t i = 0; i < length; ++i) info.rsdp[i] = tag[kTagHeader + i];
  info.rsdp_length = length;
  have_new = have_new || is_new;
}

}  // namespace

Result<BootInfo> parse(const uint8_t* block, uint64_t address, uint32_t readable) {
  if (!block || readable < kBlockHeader)
    return fail("multiboot2: the information block is missing or truncated");
  const uint32_t total = le32(block);
  if (total < kBlockHeader + kTagHeader) return fail("multiboot2: the information block is too short");
  if (total > kMaxBlockSize) return fail("multiboot2: the information block claims more than 1 MiB");
  if (total > readable) return fail("multiboot2: the information block is truncated");

  BootInfo info{};
  info.protocol = 2;
  add_loader_range(info, address, total);
  bool have_new_rsdp = false;
  bool ended = false;
  for (uint32_t offset = kBlockHeader; offset + kTagHeader <= total;) {
    const uint8_t* tag = block + offset;
    const uint32_t type = le32(tag);
    const uint32_t size = le32(tag + 4);
    if (size < kTagHeader || size > total - offset)
      return fail("multiboot2: a tag runs past the end of the block");
    if (type == kTagEnd) {
      ended = true;
      break;
    }
    const char* text = nullptr;
    switch (type) {
      case kTagCmdline:
        if (!tag_text(tag, size, text)) return fail("multiboot2: the command line tag is not terminated");
        if (!lib::copy_text(info.cmdline, kMaxCmdline, text))
          return fail("the kernel command line is longer than 511 characters");
        break;
      case kTagLoaderName:
        if (tag_text(tag, size, text)) lib::copy_text(info.loader_name, kMaxLoaderName, text);
        break;
      case kTagModule:
        if (size >= kModuleString) {
          const uint32_t start = le32(tag + kModuleStart);
          const uint32_t end = le32(tag + kModuleEnd);
          if (end > start) add_loader_range(info, start, end - start);
        }
        break;
      case kTagBasicMemory:
        if (size >= kBasicMemoryUpper + 4) info.mem_upper_kib = le32(tag + kBasicMemoryUpper);
        break;
      case kTagMemoryMap:
        ETT_TRY(read_memory_map(tag, size, info));
        break;
      case kTagFramebuffer:
        read_framebuffer(tag, size, info);
        break;
      case kTagAcpiOld:
      case kTagAcpiNew:
        read_rsdp(tag, size, type == kTagAcpiNew, have_new_rsdp, info);
        break;
      default:
        break;  // tags this kernel does not use (EFI tables, APM, SMBIOS, ...)
    }
    offset += (size + 7) & ~7u;
  }
  if (!ended) return fail("multiboot2: the information block has no end tag");
  if (!info.ram_from_memory_map && info.mem_upper_kib)
    info.ram[info.ram_count++] = {0x100000, 0x100000 + uint64_t{info.mem_upper_kib} * 1024};
  if (info.ram_count == 0) return fail("the boot loader reported no usable RAM");
  return info;
}

}  // namespace ett::boot::multiboot2
