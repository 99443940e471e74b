// layout_test.cpp: the probe split of every layout (kernel/include/ett/probe_layout.h).
#include <gtest/gtest.h>

#include "ett/probe_layout.h"

namespace ett::format {
namespace {

TEST(KernelLayout, ProbeCountsAndWidths) {
  EXPECT_EQ(line_split(Layout::Double2x4).probe_count, 2);
  EXPECT_EQ(line_split(Layout::Double2x4).bits_per_probe, 4);
  EXPECT_EQ(line_split(Layout::Single8x1).probe_count, 8);
  EXPECT_EQ(line_split(Layout::Single8x1).bits_per_probe, 1);
  EXPECT_EQ(line_split(Layout::Quad4x2).probe_count, 4);
  EXPECT_EQ(line_split(Layout::Quad4x2).bits_per_probe, 2);
  EXPECT_EQ(line_split(Layout::Byte1x8).probe_count, 1);
  EXPECT_EQ(line_split(Layout::Byte1x8).bits_per_probe, 8);
  EXPECT_EQ(line_split(static_cast<Layout>(99)).probe_count, 0);
}

TEST(KernelLayout, MasksPartitionTheEightLines) {
  for (Layout layout : {Layout::Double2x4, Layout::Single8x1, Layout::Quad4x2, Layout::Byte1x8}) {
    const LineSplit split = line_split(layout);
    unsigned covered = 0;
    for (uint32_t k = 0; k < split.probe_count; ++k) {
      EXPECT_EQ(covered & split.mask(k), 0u) << "probes overlap";
      covered |= split.mask(k);
    }
    EXPECT_EQ(covered, 0xFFu);
  }
}

TEST(KernelLayout, DoubleProbeIsLowNibbleThenHighNibble) {
  const LineSplit split = line_split(Layout::Double2x4);
  EXPECT_EQ(split.mask(0), 0x0F);
  EXPECT_EQ(split.mask(1), 0xF0);
  EXPECT_EQ(split.code(0, 0x5A), 0xA);
  EXPECT_EQ(split.code(1, 0x5A), 0x5);
}

TEST(KernelLayout, CodesOfEveryLayout) {
  EXPECT_EQ(line_split(Layout::Single8x1).code(0, 0x01), 1);
  EXPECT_EQ(line_split(Layout::Single8x1).code(7, 0x80), 1);
  EXPECT_EQ(line_split(Layout::Single8x1).code(6, 0x80), 0);
  EXPECT_EQ(line_split(Layout::Quad4x2).code(0, 0b11100100), 0b00);
  EXPECT_EQ(line_split(Layout::Quad4x2).code(1, 0b11100100), 0b01);
  EXPECT_EQ(line_split(Layout::Quad4x2).code(2, 0b11100100), 0b10);
  EXPECT_EQ(line_split(Layout::Quad4x2).code(3, 0b11100100), 0b11);
  EXPECT_EQ(line_split(Layout::Byte1x8).code(0, 0xC3), 0xC3);
  EXPECT_EQ(line_split(Layout::Byte1x8).mask(0), 0xFF);
}

}  // namespace
}  // namespace ett::format
