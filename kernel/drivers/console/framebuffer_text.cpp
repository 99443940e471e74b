// framebuffer_text.cpp: glyphs drawn pixel by pixel from the built-in font, cell by cell.
#include "drivers/console/framebuffer_text.h"

namespace ett::drivers {

namespace {

bool channel_fits(uint8_t position, uint8_t size, uint8_t bytes) {
  return size >= 1 && size <= 8 && position + size <= bytes * 8u;
}

}  // namespace

Result<FramebufferText> FramebufferText::open(const FramebufferGeometry& geometry) {
  const PixelFormat& f = geometry.format;
  if (!geometry.base) return fail("the framebuffer has no address");
  if (geometry.width < kGridWidth || geometry.height < kGridHeight)
    return fail("the framebuffer is smaller than 640x400 pixels");
  if (f.bytes_per_pixel < 2 || f.bytes_per_pixel > 4)
    return fail("the framebuffer is not 16, 24 or 32 bits per pixel");
  if (geometry.pitch < geometry.width * f.bytes_per_pixel)
    return fail("the framebuffer's pitch is shorter than a line");
  if (!channel_fits(f.red_position, f.red_size, f.bytes_per_pixel) ||
      !channel_fits(f.green_position, f.green_size, f.bytes_per_pixel) ||
      !channel_fits(f.blue_position, f.blue_size, f.bytes_per_pixel))
    return fail("the framebuffer's colour fields do not fit its pixels");
  return FramebufferText(geometry);
}

FramebufferText::FramebufferText(const FramebufferGeometry& geometry)
    : m_fb(geometry), m_x0(origin_x(geometry.width)), m_y0(origin_y(geometry.height)) {
  clear();
}

uint32_t FramebufferText::pixel_value(uint32_t rgb) const {
  const PixelFormat& f = m_fb.format;
  auto channel = [](uint32_t value8, uint8_t position, uint8_t size) {
    return (value8 >> (8 - size)) << position;
  };
  return channel(rgb >> 16 & 0xFF, f.red_position, f.red_size) |
         channel(rgb >> 8 & 0xFF, f.green_position, f.green_size) |
         channel(rgb & 0xFF, f.blue_position, f.blue_size);
}

void FramebufferText::store(uint8_t* at, uint32_t value) const {
  switch (m_fb.format.bytes_per_pixel) {
    case 4:
      *reinterpret_cast<uint32_t*>(at) = value;
      break;
    case 2:
      *reinterpret_cast<uint16_t*>(at) = static_cast<uint16_t>(value);
      break;
    default:
      at[0] = static_cast<uint8_t>(value);
      at[1] = static_cast<uint8_t>(value >> 8);
      at[2] = static_cast<uint8_t>(value >> 16);
  }
}

void FramebufferText::clear() {
  const uint32_t black = pixel_value(kPalette[0]);
  for (uint32_t y = 0; y < m_fb.height; ++y) {
    uint8_t* line = m_fb.base + static_cast<size_t>(y) * m_fb.pitch;
    for (uint32_t x = 0; x < m_fb.width; ++x) store(line + x * m_fb.format.bytes_per_pixel, black);
  }
  // A blank in the console's light grey on black is what is painted: the console's own clear then draws
  // nothing again (under TCG each cell drawn costs 128 pixel stores).
  for (uint16_t& cell : m_cells) cell = static_cast<uint16_t>(kBlankAttribute << 8 | ' ');
}

void FramebufferText::draw(uint32_t row, uint32_t column, uint16_t cell) {
  uint16_t& shown = m_cells[row * kColumns + column];
  if (shown == cell) return;
  shown = cell;
  const uint8_t attribute = static_cast<uint8_t>(cell >> 8);
  const uint32_t foreground = pixel_value(kPalette[attribute & 0x0F]);
  const uint32_t background = pixel_value(kPalette[attribute >> 4 & 0x07]);  // bit 7 is blink, not colour
  const font::Glyph& glyph = font::glyph(static_cast<char>(cell & 0xFF));
  const uint32_t bytes = m_fb.format.bytes_per_pixel;
  uint8_t* top = m_fb.base + static_cast<size_t>(m_y0 + row * font::kHeight) * m_fb.pitch +
                 (m_x0 + column * font::kWidth) * bytes;
  for (uint32_t y = 0; y < font::kHeight; ++y) {
    uint8_t* line = top + static_cast<size_t>(y) * m_fb.pitch;
    for (uint32_t x = 0; x < font::kWidth; ++x)
      store(line + x * bytes, (glyph.rows[y] & (0x80 >> x)) ? foreground : background);
  }
}

void FramebufferText::put(uint32_t row, uint32_t column, char c, uint8_t attribute) {
  if (row < kRows && column < kColumns)
    draw(row, column, static_cast<uint16_t>(attribute << 8 | static_cast<uint8_t>(c)));
}

void FramebufferText::scroll_up(uint8_t attribute) {
  for (uint32_t row = 0; row + 1 < kRows; ++row)
    for (uint32_t column = 0; column < kColumns; ++column)
      draw(row, column, m_cells[(row + 1) * kColumns + column]);
  for (uint32_t column = 0; column < kColumns; ++column) put(kRows - 1, column, ' ', attribute);
}

}  // namespace ett::drivers
