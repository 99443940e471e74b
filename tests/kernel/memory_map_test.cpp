// memory_map_test.cpp: choosing the capture buffer from the memory map (kernel/lib/memory_map).
#include "lib/memory_map.h"

#include <gtest/gtest.h>

#include <vector>

namespace ett::lib {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kFourGiB = 1ull << 32;

PhysRange pick(const std::vector<PhysRange>& available, const std::vector<PhysRange>& excluded,
               uint64_t floor = 0, uint64_t ceiling = kFourGiB, uint64_t alignment = 16) {
  return largest_free_range(available.data(), available.size(), excluded.data(), excluded.size(), floor,
                            ceiling, alignment);
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

}  // namespace
}  // namespace ett::lib
