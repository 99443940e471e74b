// multiboot2_test.cpp: the multiboot2 tag walk (kernel/lib/multiboot2) on blocks built like GRUB's: a BIOS
// boot, a UEFI boot with a framebuffer and both RSDP copies, and truncated, damaged and odd blocks.
#include "lib/multiboot2.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace ett::boot::multiboot2 {
namespace {

// Builds a block tag by tag, 8-byte aligned, the way a loader lays it out.
class Block {
 public:
  Block() : m_bytes(8, 0) {}
  Block& tag(uint32_t type, const std::vector<uint8_t>& body) {
    const uint32_t size = 8 + static_cast<uint32_t>(body.size());
    put32(type);
    put32(size);
    m_bytes.insert(m_bytes.end(), body.begin(), body.end());
    while (m_bytes.size() % 8) m_bytes.push_back(0);
    return *this;
  }
  Block& text(uint32_t type, const std::string& text) {
    std::vector<uint8_t> body(text.begin(), text.end());
    body.push_back(0);
    return tag(type, body);
  }
  Block& mmap(const std::vector<std::array<uint64_t, 3>>& entries, uint32_t entry_size = 24) {
    std::vector<uint8_t> body;
    le32(body, entry_size);
    le32(body, 0);  // entry version
    for (const auto& e : entries) {
      le64(body, e[0]);
      le64(body, e[1]);
      le32(body, static_cast<uint32_t>(e[2]));
      body.resize(body.size() + entry_size - 20, 0);
    }
    return tag(kTagMemoryMap, body);
  }
  // GOP-like: 32 bpp, red at 16, green at 8, blue at 0.
  Block& framebuffer(uint64_t address, uint32_t width, uint32_t height, uint8_t type = 1) {
    std::vector<uint8_t> body;
    le64(body, address);
    le32(body, width * 4);
    le32(body, width);
    le32(body, height);
    body.push_back(32);
    body.push_back(type);
    body.push_back(0);
    body.push_back(0);
    for (uint8_t v : {16, 8, 8, 8, 0, 8}) body.push_back(v);
    return tag(kTagFramebuffer, body);
  }
  Block& end() { return tag(kTagEnd, {}); }
  std::vector<uint8_t> bytes() {
    std::vector<uint8_t> out = m_bytes;
    const uint32_t total = static_cast<uint32_t>(out.size());
    std::memcpy(out.data(), &total, 4);
    return out;
  }

  static void le32(std::vector<uint8_t>& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  static void le64(std::vector<uint8_t>& out, uint64_t v) {
    le32(out, static_cast<uint32_t>(v));
    le32(out, static_cast<uint32_t>(v >> 32));
  }

 private:
  void put32(uint32_t v) { le32(m_bytes, v); }
  std::vector<uint8_t> m_bytes;
};

Result<BootInfo> parse_bytes(const std::vector<uint8_t>& bytes, uint32_t readable = 0) {
  return parse(bytes.data(), 0x10000, readable ? readable : static_cast<uint32_t>(bytes.size()));
}

std::vector<uint8_t> rsdp_bytes(uint8_t revision, uint32_t length) {
  std::vector<uint8_t> bytes(length, 0);
  std::memcpy(bytes.data(), "RSD PTR ", 8);
  bytes[15] = revision;
  return bytes;
}

TEST(KernelMultiboot2, AUefiBootLikeGrubsOnOvmf) {
  auto bytes = Block()
                   .text(kTagCmdline, "probe=ivshmem layout=2x4 auto=1")
                   .text(kTagLoaderName, "GRUB 2.06-13+deb12u2")
                   .tag(kTagBasicMemory, {0x80, 2, 0, 0, 0x00, 0xFC, 0x03, 0})
                   .mmap({{0, 0xA0000, 1},
                          {0x100000, 0x700000, 1},
                          {0x800000, 0x8000, 4},
                          {0x808000, 0x3000000, 1},
                          {0xFEC00000, 0x1000, 2}})
                   .framebuffer(0x80000000, 1280, 800)
                   .tag(kTagAcpiOld, rsdp_bytes(0, 20))
                   .tag(kTagAcpiNew, rsdp_bytes(2, 36))
                   .tag(21, {1, 2, 3, 4})  // load base address: not used
                   .end()
                   .bytes();
  auto info = parse_bytes(bytes);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->protocol, 2u);
  EXPECT_STREQ(info->cmdline, "probe=ivshmem layout=2x4 auto=1");
  EXPECT_STREQ(info->loader_name, "GRUB 2.06-13+deb12u2");
  ASSERT_EQ(info->ram_count, 3u);
  EXPECT_TRUE(info->ram_from_memory_map);
  EXPECT_EQ(info->ram[1].start, 0x100000u);
  EXPECT_EQ(info->ram[1].end, 0x800000u);
  EXPECT_EQ(info->ram[2].start, 0x808000u);
  ASSERT_EQ(info->loader_count, 1u);  // the block itself
  EXPECT_EQ(info->loader[0].start, 0x10000u);
  EXPECT_EQ(info->loader[0].end, 0x10000u + bytes.size());
  EXPECT_EQ(info->framebuffer.kind, FramebufferKind::Rgb);
  EXPECT_EQ(info->framebuffer.address, 0x80000000u);
  EXPECT_EQ(info->framebuffer.width, 1280u);
  EXPECT_EQ(info->framebuffer.height, 800u);
  EXPECT_EQ(info->framebuffer.pitch, 5120u);
  EXPECT_EQ(info->framebuffer.bpp, 32);
  EXPECT_EQ(info->framebuffer.red_position, 16);
  EXPECT_EQ(info->framebuffer.green_position, 8);
  EXPECT_EQ(info->framebuffer.blue_size, 8);
  ASSERT_EQ(info->rsdp_length, 36u);  // the ACPI 2.0 copy, not the 1.0 one
  EXPECT_EQ(info->rsdp[15], 2);
}

TEST(KernelMultiboot2, ABiosBootInTextModeWithTheOldRsdpOnly) {
  auto bytes = Block()
                   .text(kTagCmdline, "")
                   .tag(kTagAcpiOld, rsdp_bytes(0, 20))
                   .framebuffer(0xB8000, 80, 25, 2)
                   .mmap({{0, 0x9FC00, 1}, {0x100000, 0xFEE0000, 1}})
                   .end()
                   .bytes();
  auto info = parse_bytes(bytes);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_STREQ(info->cmdline, "");
  EXPECT_STREQ(info->loader_name, "");
  EXPECT_EQ(info->framebuffer.kind, FramebufferKind::VgaText);
  EXPECT_EQ(info->rsdp_length, 20u);
}

TEST(KernelMultiboot2, TheNewRsdpWinsWhicheverComesFirst) {
  auto bytes = Block()
                   .tag(kTagAcpiNew, rsdp_bytes(2, 36))
                   .tag(kTagAcpiOld, rsdp_bytes(0, 20))
                   .mmap({{0x100000, 0x1000000, 1}})
                   .end()
                   .bytes();
  auto info = parse_bytes(bytes);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rsdp_length, 36u);
}

TEST(KernelMultiboot2, NoMemoryMapFallsBackToBasicMemory) {
  auto bytes = Block().tag(kTagBasicMemory, {0x80, 2, 0, 0, 0x00, 0x04, 0, 0}).end().bytes();
  auto info = parse_bytes(bytes);
  ASSERT_TRUE(info) << info.error().message;
  ASSERT_EQ(info->ram_count, 1u);
  EXPECT_EQ(info->ram[0].start, 0x100000u);
  EXPECT_EQ(info->ram[0].end, 0x100000u + 1024 * 1024);
  EXPECT_FALSE(info->ram_from_memory_map);
  EXPECT_EQ(info->framebuffer.kind, FramebufferKind::None);
  EXPECT_EQ(info->rsdp_length, 0u);
}

TEST(KernelMultiboot2, ModulesAreKeptOutOfTheCaptureBuffer) {
  std::vector<uint8_t> module;
  Block::le32(module, 0x400000);
  Block::le32(module, 0x480000);
  module.insert(module.end(), {'m', 0});
  auto bytes = Block().mmap({{0x100000, 0x1000000, 1}}).tag(kTagModule, module).end().bytes();
  auto info = parse_bytes(bytes);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->loader_count, 2u);
  EXPECT_EQ(info->loader[1].start, 0x400000u);
  EXPECT_EQ(info->loader[1].end, 0x480000u);
}

TEST(KernelMultiboot2, TruncatedBlocksAreRefused) {
  auto bytes = Block().text(kTagCmdline, "limit=1").mmap({{0x100000, 0x1000000, 1}}).end().bytes();
  auto whole = parse_bytes(bytes);
  ASSERT_TRUE(whole);
  // The loader's block says it is longer than what can be read.
  auto cut = parse_bytes(bytes, static_cast<uint32_t>(bytes.size() - 8));
  ASSERT_FALSE(cut);
  EXPECT_STREQ(cut.error().message, "multiboot2: the information block is truncated");
  EXPECT_FALSE(parse_bytes(bytes, 4));
  EXPECT_FALSE(parse(nullptr, 0, 100));
  // total_size shorter than the tags it holds: the end tag is missing.
  std::vector<uint8_t> short_total = bytes;
  const uint32_t total = static_cast<uint32_t>(bytes.size() - 8);
  std::memcpy(short_total.data(), &total, 4);
  auto no_end = parse_bytes(short_total);
  ASSERT_FALSE(no_end);
  EXPECT_STREQ(no_end.error().message, "multiboot2: the information block has no end tag");
}

TEST(KernelMultiboot2, OddTagsAreRefusedOrSkipped) {
  // A tag whose size runs past the block.
  auto bytes = Block().text(kTagCmdline, "limit=1").end().bytes();
  std::vector<uint8_t> overrun = bytes;
  const uint32_t huge = 4096;
  std::memcpy(overrun.data() + 12, &huge, 4);
  auto refused = parse_bytes(overrun);
  ASSERT_FALSE(refused);
  EXPECT_STREQ(refused.error().message, "multiboot2: a tag runs past the end of the block");
  // A tag size below its own header would loop forever.
  std::vector<uint8_t> tiny = bytes;
  const uint32_t four = 4;
  std::memcpy(tiny.data() + 12, &four, 4);
  EXPECT_FALSE(parse_bytes(tiny));
  // A command line without its NUL inside the tag.
  auto unterminated = Block().tag(kTagCmdline, {'a', 'b', 'c'}).end().bytes();
  EXPECT_STREQ(parse_bytes(unterminated).error().message,
               "multiboot2: the command line tag is not terminated");
  // A memory map entry size that is not a multiple of 8 or too small.
  auto odd_map = Block().mmap({{0x100000, 0x1000000, 1}}, 20).end().bytes();
  EXPECT_FALSE(parse_bytes(odd_map));
  // Larger entries than 24 bytes (a later specification) are read by their size.
  auto wide_map = Block().mmap({{0x100000, 0x1000000, 1}, {0x2000000, 0x1000000, 1}}, 32).end().bytes();
  auto wide = parse_bytes(wide_map);
  ASSERT_TRUE(wide) << wide.error().message;
  ASSERT_EQ(wide->ram_count, 2u);
  EXPECT_EQ(wide->ram[1].start, 0x2000000u);
  // A framebuffer tag cut before its colour fields, an unknown framebuffer type: no framebuffer.
  auto short_fb =
      Block().mmap({{0x100000, 0x1000000, 1}}).tag(kTagFramebuffer, std::vector<uint8_t>(20, 0)).end();
  EXPECT_EQ(parse_bytes(short_fb.bytes())->framebuffer.kind, FramebufferKind::None);
  auto odd_fb = Block().mmap({{0x100000, 0x1000000, 1}}).framebuffer(0x80000000, 800, 600, 7).end().bytes();
  EXPECT_EQ(parse_bytes(odd_fb)->framebuffer.kind, FramebufferKind::None);
  // An RSDP copy larger than kept is cut to kMaxRsdpCopy.
  auto big_rsdp = Block().mmap({{0x100000, 0x1000000, 1}}).tag(kTagAcpiNew, rsdp_bytes(2, 100)).end().bytes();
  EXPECT_EQ(parse_bytes(big_rsdp)->rsdp_length, kMaxRsdpCopy);
  // A huge total_size.
  std::vector<uint8_t> huge_total = bytes;
  const uint32_t two_mib = 2u << 20;
  std::memcpy(huge_total.data(), &two_mib, 4);
  EXPECT_FALSE(parse(huge_total.data(), 0, UINT32_MAX));
}

TEST(KernelMultiboot2, NoRamAndLongCommandLinesAreRefused) {
  auto no_ram = Block().text(kTagCmdline, "x").end().bytes();
  EXPECT_STREQ(parse_bytes(no_ram).error().message, "the boot loader reported no usable RAM");
  auto reserved_only = Block().mmap({{0x100000, 0x1000000, 2}}).end().bytes();
  EXPECT_FALSE(parse_bytes(reserved_only));
  auto long_line =
      Block().text(kTagCmdline, std::string(600, 'a')).mmap({{0x100000, 0x1000000, 1}}).end().bytes();
  EXPECT_STREQ(parse_bytes(long_line).error().message,
               "the kernel command line is longer than 511 characters");
}

}  // namespace
}  // namespace ett::boot::multiboot2
