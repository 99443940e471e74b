// memory_map_test.cpp: choosing the capture buffer from the memory map (kernel/lib/memory_map).
#include "lib/memory_map.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "lib/boot_info.h"

namespace ett::lib {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kFourGiB = 1ull << 32;

PhysRange pick(const std::vector<PhysRange>& available, const std::vector<PhysRange>& excluded,
               uint64_t floor = 0, uint64_t ceiling = kFourGiB, uint64_t alignment = 16) {
  return largest_free_range(available.data(), available.size(), excluded.data(), excluded.size(), floor,
                            ceiling, alignment);
}

std::vector<PhysRange> pieces(const std::vector<PhysRange>& available, const std::vector<PhysRange>& excluded,
                              uint64_t floor, uint64_t ceiling, uint64_t alignment, size_t capacity = 16) {
  std::vector<PhysRange> out(capacity);
  out.resize(free_ranges(available.data(), available.size(), excluded.data(), excluded.size(), floor, ceiling,
                         alignment, out.data(), out.size()));
  return out;
}

bool same(const std::vector<PhysRange>& a, const std::vector<PhysRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].end != b[i].end) return false;
  return true;
}

TEST(KernelMemoryMap, EveryFreePieceBelowAndAbove4GiBInAddressOrder) {
  // e820 of `qemu-system-x86_64 -M q35 -m 6G` (2 GiB below 4 GiB, 4 GiB above), the map unsorted, an
  // excluded loader range in the low piece; 2 MiB alignment as the x86-64 kernel's buffer window uses.
  constexpr uint64_t k2M = 2 * kMiB;
  const std::vector<PhysRange> ram = {{kFourGiB, 2 * kFourGiB}, {0, 0x9FC00}, {0x100000, 0x7FFE0000}};
  const std::vector<PhysRange> excluded = {{0x10000000, 0x10001000}};
  EXPECT_TRUE(same(pieces(ram, excluded, 0x243000, UINT64_MAX, k2M),
                   {{0x400000, 0x10000000}, {0x10200000, 0x7FE00000}, {kFourGiB, 2 * kFourGiB}}));
  // A floor at 4 GiB (buffer=above4g) keeps only the high piece.
  EXPECT_TRUE(same(pieces(ram, excluded, kFourGiB, UINT64_MAX, k2M), {{kFourGiB, 2 * kFourGiB}}));
  // Pieces smaller than one page (the 639 KiB below 1 MiB) are dropped.
  EXPECT_TRUE(same(pieces({{0, 0x9FC00}}, {}, 0, UINT64_MAX, k2M), {}));
}

TEST(KernelMemoryMap, FreePiecesKeepTheLargestWhenTheyDoNotAllFitAndMergeOverlaps) {
  const std::vector<PhysRange> ram = {{0, 10 * kMiB}, {20 * kMiB, 50 * kMiB}, {60 * kMiB, 65 * kMiB}};
  // Room for two: the 5 MiB piece goes, the order stays by address.
  EXPECT_TRUE(same(pieces(ram, {}, 0, UINT64_MAX, kMiB, 2), {{0, 10 * kMiB}, {20 * kMiB, 50 * kMiB}}));
  // Two overlapping available entries give one piece, not the same memory twice.
  EXPECT_TRUE(
      same(pieces({{0, 10 * kMiB}, {5 * kMiB, 12 * kMiB}}, {}, 0, UINT64_MAX, kMiB), {{0, 12 * kMiB}}));
}

TEST(KernelMemoryMap, QemuPcWith256MiB) {
  // e820 of `qemu-system-i386 -M pc -m 256`; the kernel image ends at 1 MiB + 200 KiB.
  const std::vector<PhysRange> ram = {{0, 0x9FC00}, {0x100000, 0xFFE0000}};
  const PhysRange range = pick(ram, {}, 0x132000);
  EXPECT_EQ(range.start, 0x132000u);
  EXPECT_EQ(range.end, 0xFFE0000u);
}

TEST(KernelMemoryMap, ExcludedRangeSplitsARegion) {
  const std::vector<PhysRange> ram = {{1 * kMiB, 100 * kMiB}};
  // GRUB's info block and modules in the middle: the larger side wins.
  EXPECT_EQ(pick(ram, {{30 * kMiB, 31 * kMiB}}, 2 * kMiB).start, 31 * kMiB);
  EXPECT_EQ(pick(ram, {{30 * kMiB, 31 * kMiB}}, 2 * kMiB).end, 100 * kMiB);
  EXPECT_EQ(pick(ram, {{70 * kMiB, 71 * kMiB}}, 2 * kMiB).start, 2 * kMiB);
  EXPECT_EQ(pick(ram, {{70 * kMiB, 71 * kMiB}}, 2 * kMiB).end, 70 * kMiB);
}

TEST(KernelMemoryMap, SeveralExclusionsAndOverlaps) {
  const std::vector<PhysRange> ram = {{0, 100}, {1000, 2000}};
  const std::vector<PhysRange> excluded = {{1100, 1200}, {1150, 1500}, {1900, 2100}, {10, 20}};
  const PhysRange range = pick(ram, excluded, 0, kFourGiB, 1);
  EXPECT_EQ(range.start, 1500u);
  EXPECT_EQ(range.end, 1900u);
}

TEST(KernelMemoryMap, AlignmentShrinksThePiece) {
  const PhysRange range = pick({{0x1003, 0x2009}}, {}, 0, kFourGiB, 16);
  EXPECT_EQ(range.start, 0x1010u);
  EXPECT_EQ(range.end, 0x2000u);
}

TEST(KernelMemoryMap, CeilingCutsRamAbove4GiB) {
  const PhysRange range = pick({{kFourGiB - kMiB, kFourGiB + 64 * kMiB}}, {}, 0, 0xFFFFF000);
  EXPECT_EQ(range.start, kFourGiB - kMiB);
  EXPECT_EQ(range.end, 0xFFFFF000u);
  EXPECT_EQ(pick({{kFourGiB, 2 * kFourGiB}}, {}, 0, kFourGiB).size(), 0u);
}

TEST(KernelMemoryMap, NothingFree) {
  EXPECT_EQ(pick({}, {}).size(), 0u);
  EXPECT_EQ(pick({{kMiB, 2 * kMiB}}, {{0, 3 * kMiB}}).size(), 0u);
  EXPECT_EQ(pick({{kMiB, 2 * kMiB}}, {}, 2 * kMiB).size(), 0u);
}

// What the kernel passes: the loader's ranges and every non-RAM map entry (kernel/main.cpp).
PhysRange pick_from_map(const boot::BootInfo& info, uint64_t floor) {
  std::vector<PhysRange> excluded(boot::kMaxLoaderRanges + boot::kMaxReservedRanges);
  size_t count = append_ranges(excluded.data(), 0, excluded.size(), info.loader, info.loader_count);
  count = append_ranges(excluded.data(), count, excluded.size(), info.reserved, info.reserved_count);
  return largest_free_range(info.ram, info.ram_count, excluded.data(), count, floor, kFourGiB, 16);
}

TEST(KernelMemoryMap, ReservedAndNvsEntriesInsideAvailableOnesAreKeptOut) {
  // A firmware map, unsorted, whose available entry overlaps an ACPI NVS range and a reserved range (the
  // memory a UEFI firmware parks its other cores in): before, only available entries were read, so the
  // buffer covered both.
  auto info = std::make_unique<boot::BootInfo>();
  boot::add_memory_map_entry(*info, 0x100000, 0x7F00000, 1);  // 1 MiB - 128 MiB available
  boot::add_memory_map_entry(*info, 0x6000000, 0x100000, 4);  // 96 MiB: ACPI NVS, inside it
  boot::add_memory_map_entry(*info, 0x0, 0x9F000, 1);
  boot::add_memory_map_entry(*info, 0x2000000, 0x10000, 2);  // 32 MiB: reserved (AP wake-up loop)
  boot::add_memory_map_entry(*info, 0x7000000, 0x2000000,
                             3);                         // 112-144 MiB: ACPI reclaimable, overlapping the end
  boot::add_memory_map_entry(*info, 0x8000000, 0x0, 2);  // empty: dropped
  ASSERT_EQ(info->ram_count, 2u);
  ASSERT_EQ(info->reserved_count, 3u);
  const PhysRange range = pick_from_map(*info, 0x200000);
  // Free pieces: 2-32 MiB, 32 MiB + 64 KiB - 96 MiB, 97-112 MiB: the middle one is the largest.
  EXPECT_EQ(range.start, 0x2010000u);
  EXPECT_EQ(range.end, 0x6000000u);
  for (uint32_t i = 0; i < info->reserved_count; ++i) EXPECT_FALSE(range.overlaps(info->reserved[i])) << i;
}

TEST(KernelMemoryMap, MemoryTheMapDoesNotListIsNeverUsed) {
  auto info = std::make_unique<boot::BootInfo>();
  boot::add_memory_map_entry(*info, 0x100000, 0xF00000, 1);   // 1-16 MiB
  boot::add_memory_map_entry(*info, 0x2000000, 0x800000, 1);  // 32-40 MiB: 16-32 MiB is a hole
  const PhysRange range = pick_from_map(*info, 0x100000);
  EXPECT_EQ(range.start, 0x100000u);
  EXPECT_EQ(range.end, 0x1000000u);
}

TEST(KernelMemoryMap, TooManyReservedEntriesAreFlagged) {
  auto info = std::make_unique<boot::BootInfo>();
  for (uint32_t i = 0; i <= boot::kMaxReservedRanges; ++i)
    boot::add_memory_map_entry(*info, i * 0x1000, 0x1000, 2);
  EXPECT_EQ(info->reserved_count, boot::kMaxReservedRanges);
  EXPECT_TRUE(info->reserved_overflow);
}

}  // namespace
}  // namespace ett::lib
