// font_test.cpp: the framebuffer console's built-in font (kernel/drivers/console/font_8x16.h): every
// printable character has its own glyph (screenshots are decoded by matching glyphs), and the art is laid out
// as meant.
#include <gtest/gtest.h>

#include <cstring>

#include "drivers/console/font_8x16.h"

namespace ett::font {
namespace {

bool same(const Glyph& a, const Glyph& b) {
  return std::memcmp(a.rows, b.rows, sizeof(a.rows)) == 0;
}

TEST(KernelFont, EveryPrintableCharacterHasItsOwnGlyph) {
  for (char a = kFirst; a <= kLast; ++a)
    for (char b = static_cast<char>(a + 1); b <= kLast && b > a; ++b)
      EXPECT_FALSE(same(glyph(a), glyph(b))) << "'" << a << "' and '" << b << "' look the same";
}

TEST(KernelFont, OnlyTheSpaceIsBlank) {
  for (char c = kFirst; c <= kLast; ++c) {
    uint32_t pixels = 0;
    for (uint8_t row : glyph(c).rows) pixels += static_cast<uint32_t>(__builtin_popcount(row));
    if (c == ' ')
      EXPECT_EQ(pixels, 0u);
    else
      EXPECT_GT(pixels, 0u) << c;
  }
}

TEST(KernelFont, GlyphsLeaveTheCellEdgesFreeAndDoubleTheArtRows) {
  for (char c = kFirst; c <= kLast; ++c) {
    const Glyph& g = glyph(c);
    for (uint32_t r = 0; r < kHeight; ++r) {
      EXPECT_EQ(g.rows[r] & 0x83, 0) << "'" << c << "' row " << r << " touches column 0, 6 or 7";
      if (r % 2) {
        EXPECT_EQ(g.rows[r], g.rows[r - 1]) << c;
      }
    }
  }
  // 'T': the bar across the top, then the stem in the middle column.
  EXPECT_EQ(glyph('T').rows[0], 0x7C);
  EXPECT_EQ(glyph('T').rows[2], 0x10);
}

TEST(KernelFont, UnprintableCharactersShowTheReplacement) {
  EXPECT_TRUE(same(glyph('\x01'), glyph(kReplacement)));
  EXPECT_TRUE(same(glyph(static_cast<char>(0xC4)), glyph(kReplacement)));
  EXPECT_TRUE(same(glyph('\x7F'), glyph(kReplacement)));
}

}  // namespace
}  // namespace ett::font
