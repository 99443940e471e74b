// framebuffer_text_test.cpp: the framebuffer console (kernel/drivers/console/framebuffer_text) drawing into a
// buffer: cells land centred with the font's pixels in the attribute's colours, in 32, 24 and 16 bits per
// pixel; scrolling redraws; sizes and formats it cannot draw on are refused.
#include "drivers/console/framebuffer_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace ett::drivers {
namespace {

constexpr PixelFormat kBgrx32{4, 16, 8, 8, 8, 0, 8};  // UEFI GOP's usual BGRX
constexpr PixelFormat kRgb24{3, 16, 8, 8, 8, 0, 8};
constexpr PixelFormat kRgb565{2, 11, 5, 5, 6, 0, 5};

struct Canvas {
  uint32_t width, height, pitch;
  PixelFormat format;
  std::vector<uint8_t> bytes;
  Canvas(uint32_t w, uint32_t h, PixelFormat f, uint32_t padding = 0)
      : width(w),
        height(h),
        pitch(w * f.bytes_per_pixel + padding),
        format(f),
        bytes(size_t{pitch} * h, 0xAB) {}
  FramebufferGeometry geometry() { return {bytes.data(), pitch, width, height, format}; }
  uint32_t pixel(uint32_t x, uint32_t y) const {
    uint32_t value = 0;
    for (uint32_t i = 0; i < format.bytes_per_pixel; ++i)
      value |= uint32_t{bytes[size_t{y} * pitch + x * format.bytes_per_pixel + i]} << (8 * i);
    return value;
  }
  // The character in a cell, decoded the way the QEMU screen tests decode a screendump: the glyph whose
  // pixels are the ones that differ from the background colour.
  char cell(uint32_t row, uint32_t column, uint32_t background) const {
    font::Glyph seen{};
    const uint32_t x0 = FramebufferText::origin_x(width) + column * font::kWidth;
    const uint32_t y0 = FramebufferText::origin_y(height) + row * font::kHeight;
    for (uint32_t y = 0; y < font::kHeight; ++y)
      for (uint32_t x = 0; x < font::kWidth; ++x)
        if (pixel(x0 + x, y0 + y) != background) seen.rows[y] |= static_cast<uint8_t>(0x80 >> x);
    for (char c = font::kFirst; c <= font::kLast; ++c)
      if (std::equal(seen.rows, seen.rows + font::kHeight, font::glyph(c).rows)) return c;
    return '\0';
  }
};

TEST(KernelFramebufferText, CellsAreCentredInTheAttributesColours) {
  Canvas canvas(800, 600, kBgrx32);
  auto screen = FramebufferText::open(canvas.geometry());
  ASSERT_TRUE(screen) << screen.error().message;
  EXPECT_EQ(canvas.pixel(0, 0), 0u);  // painted black
  EXPECT_EQ(canvas.pixel(799, 599), 0u);
  screen->put(0, 0, 'E', 0x70);    // black on light grey
  screen->put(24, 79, 'T', 0x4F);  // white on red
  EXPECT_EQ(canvas.cell(0, 0, 0xAAAAAA), 'E');
  EXPECT_EQ(canvas.cell(24, 79, 0xAA0000), 'T');
  // The grid starts at (80, 100) on 800x600: the pixel left of it is still black.
  EXPECT_EQ(FramebufferText::origin_x(800), 80u);
  EXPECT_EQ(FramebufferText::origin_y(600), 100u);
  EXPECT_EQ(canvas.pixel(79, 100), 0u);
  EXPECT_EQ(canvas.pixel(80, 100), 0xAAAAAAu);  // background of 'E', whose column 0 is blank
  // 'T' row 0: pixels 1-5 white, the rest red.
  const uint32_t tx = 80 + 79 * 8, ty = 100 + 24 * 16;
  EXPECT_EQ(canvas.pixel(tx, ty), 0xAA0000u);
  EXPECT_EQ(canvas.pixel(tx + 1, ty), 0xFFFFFFu);
  EXPECT_EQ(canvas.pixel(tx + 5, ty), 0xFFFFFFu);
  EXPECT_EQ(canvas.pixel(tx + 6, ty), 0xAA0000u);
}

TEST(KernelFramebufferText, EveryPrintableCharacterDecodesBack) {
  Canvas canvas(640, 400, kBgrx32, 64);  // exactly the grid, with a padded pitch
  auto screen = FramebufferText::open(canvas.geometry());
  ASSERT_TRUE(screen);
  for (char c = font::kFirst; c <= font::kLast; ++c) {
    const uint32_t i = static_cast<uint32_t>(c - font::kFirst);
    screen->put(i / 80, i % 80, c, 0x07);
  }
  for (char c = font::kFirst; c <= font::kLast; ++c) {
    const uint32_t i = static_cast<uint32_t>(c - font::kFirst);
    EXPECT_EQ(canvas.cell(i / 80, i % 80, 0), c);
  }
  // The padding after each line is never written.
  EXPECT_EQ(canvas.bytes[640 * 4], 0xAB);
}

TEST(KernelFramebufferText, TwentyFourAndSixteenBitPixels) {
  Canvas rgb24(1024, 768, kRgb24);
  auto a = FramebufferText::open(rgb24.geometry());
  ASSERT_TRUE(a);
  a->put(3, 4, 'x', 0x0F);
  EXPECT_EQ(rgb24.cell(3, 4, 0), 'x');
  EXPECT_EQ(rgb24.cell(3, 5, 0), ' ');

  Canvas rgb565(640, 480, kRgb565);
  auto b = FramebufferText::open(rgb565.geometry());
  ASSERT_TRUE(b);
  b->put(0, 0, 'Q', 0x1E);  // yellow on blue
  const uint32_t blue565 = 0xAA >> 3;
  EXPECT_EQ(rgb565.cell(0, 0, blue565), 'Q');
  const uint32_t x0 = FramebufferText::origin_x(640), y0 = FramebufferText::origin_y(480);
  EXPECT_EQ(rgb565.pixel(x0 + 1, y0 + 2), (0xFFu >> 3) << 11 | (0xFFu >> 2) << 5 | (0x55u >> 3));
}

TEST(KernelFramebufferText, ScrollingMovesEveryRowUp) {
  Canvas canvas(640, 400, kBgrx32);
  auto screen = FramebufferText::open(canvas.geometry());
  ASSERT_TRUE(screen);
  for (uint32_t row = 0; row < 25; ++row) screen->put(row, 0, static_cast<char>('A' + row), 0x07);
  screen->scroll_up(0x07);
  for (uint32_t row = 0; row < 24; ++row)
    EXPECT_EQ(canvas.cell(row, 0, 0), static_cast<char>('B' + row)) << row;
  EXPECT_EQ(canvas.cell(24, 0, 0), ' ');
}

TEST(KernelFramebufferText, UnusableFramebuffersAreRefused) {
  Canvas small(639, 480, kBgrx32);
  auto refused = FramebufferText::open(small.geometry());
  ASSERT_FALSE(refused);
  EXPECT_STREQ(refused.error().message, "the framebuffer is smaller than 640x400 pixels");
  Canvas canvas(800, 600, kBgrx32);
  FramebufferGeometry g = canvas.geometry();
  g.pitch = 100;
  EXPECT_FALSE(FramebufferText::open(g));
  g = canvas.geometry();
  g.format.bytes_per_pixel = 1;
  EXPECT_FALSE(FramebufferText::open(g));
  g = canvas.geometry();
  g.format.red_position = 30;  // past the pixel
  EXPECT_FALSE(FramebufferText::open(g));
  g = canvas.geometry();
  g.base = nullptr;
  EXPECT_FALSE(FramebufferText::open(g));
  EXPECT_EQ(canvas.bytes[0], 0xAB);  // nothing drawn by a refused open
}

}  // namespace
}  // namespace ett::drivers
