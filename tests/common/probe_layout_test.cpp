// probe_layout_test.cpp: the line split of each layout (trace_format.h's Layout comments).
#include "common/probe_layout.h"

#include <gtest/gtest.h>

namespace ett::host {
namespace {

namespace f = ett::format;

TEST(ProbeLayout, Names) {
  EXPECT_EQ(ProbeLayout::from_name("2x4")->layout(), f::Layout::Double2x4);
  EXPECT_EQ(ProbeLayout::from_name("8x1")->layout(), f::Layout::Single8x1);
  EXPECT_EQ(ProbeLayout::from_name("4x2")->layout(), f::Layout::Quad4x2);
  EXPECT_EQ(ProbeLayout::from_name("1x8")->layout(), f::Layout::Byte1x8);
  EXPECT_FALSE(ProbeLayout::from_name("3x3"));
  EXPECT_STREQ(ProbeLayout().name(), "2x4");
}

TEST(ProbeLayout, LinesOfEachProbe) {
  ProbeLayout double_probe(f::Layout::Double2x4);  // probe 1 = D0-D3, probe 2 = D4-D7
  EXPECT_EQ(double_probe.probe_count(), 2);
  EXPECT_EQ(double_probe.mask(1), 0x0F);
  EXPECT_EQ(double_probe.mask(2), 0xF0);
  EXPECT_EQ(double_probe.code_of(0xA5, 1), 0x5);
  EXPECT_EQ(double_probe.code_of(0xA5, 2), 0xA);
  EXPECT_EQ(double_probe.with_code(0xA5, 2, 0x3), 0x35);

  ProbeLayout single(f::Layout::Single8x1);  // probe k = D(k-1)
  EXPECT_EQ(single.probe_count(), 8);
  EXPECT_EQ(single.mask(1), 0x01);
  EXPECT_EQ(single.mask(8), 0x80);
  EXPECT_EQ(single.with_code(0x00, 8, 1), 0x80);
  EXPECT_EQ(single.max_code(), 1);

  ProbeLayout quad(f::Layout::Quad4x2);  // probe k = D(2k-2)..D(2k-1)
  EXPECT_EQ(quad.probe_count(), 4);
  EXPECT_EQ(quad.mask(3), 0x30);
  EXPECT_EQ(quad.with_code(0xFF, 3, 1), 0xDF);

  ProbeLayout byte(f::Layout::Byte1x8);
  EXPECT_EQ(byte.probe_count(), 1);
  EXPECT_EQ(byte.max_code(), 255);
  EXPECT_EQ(byte.with_code(0x12, 1, 0xEE), 0xEE);
}

}  // namespace
}  // namespace ett::host
