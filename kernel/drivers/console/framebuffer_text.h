// framebuffer_text.h: a CellScreen drawn into a linear framebuffer (UEFI GOP, VBE) with the built-in 8x16
// font: the same 80x25 screens as VGA text mode, centred. Writes only memory: the host tests render into a
// buffer.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "drivers/console/cell_screen.h"
#include "drivers/console/font_8x16.h"
#include "ett/result.h"

namespace ett::drivers {

// Where each colour channel sits in a pixel (multiboot2's framebuffer colour info).
struct PixelFormat {
  uint8_t bytes_per_pixel;  // 2, 3 or 4
  uint8_t red_position, red_size;
  uint8_t green_position, green_size;
  uint8_t blue_position, blue_size;
};

struct FramebufferGeometry {
  uint8_t* base;
  uint32_t pitch;  // bytes per scan line
  uint32_t width;
  uint32_t height;
  PixelFormat format;
};

class FramebufferText final : public CellScreen {
 public:
  static constexpr uint32_t kGridWidth = kColumns * font::kWidth;  // 640
  static constexpr uint32_t kGridHeight = kRows * font::kHeight;   // 400

  // The grid's top-left pixel: centred, on whole pixels.
  static constexpr uint32_t origin_x(uint32_t width) { return (width - kGridWidth) / 2; }
  static constexpr uint32_t origin_y(uint32_t height) { return (height - kGridHeight) / 2; }

  // Fails when the framebuffer is smaller than 640x400 or its pixel format is not one this driver draws;
  // otherwise paints it black.
  static Result<FramebufferText> open(const FramebufferGeometry& geometry);

  // Paints the whole framebuffer black and forgets what the cells held.
  void clear();
  void put(uint32_t row, uint32_t column, char c, uint8_t attribute) override;
  void scroll_up(uint8_t attribute) override;

  // The 16 VGA text colours as 0xRRGGBB (attribute nibble -> colour).
  static constexpr uint32_t kPalette[16] = {0x000000, 0x0000AA, 0x00AA00, 0x00AAAA, 0xAA0000, 0xAA00AA,
                                            0xAA5500, 0xAAAAAA, 0x555555, 0x5555FF, 0x55FF55, 0x55FFFF,
                                            0xFF5555, 0xFF55FF, 0xFFFF55, 0xFFFFFF};
  // What a cleared cell holds: a blank, light grey on black (the console's attribute).
  static constexpr uint8_t kBlankAttribute = 0x07;

 private:
  explicit FramebufferText(const FramebufferGeometry& geometry);
  uint32_t pixel_value(uint32_t rgb) const;
  void store(uint8_t* at, uint32_t value) const;
  void draw(uint32_t row, uint32_t column, uint16_t cell);

  FramebufferGeometry m_fb;
  uint32_t m_x0;
  uint32_t m_y0;
  // What each cell shows (character | attribute << 8): scrolling redraws only the cells that change, and
  // never reads the framebuffer back (slow on real hardware, where it is write-combined).
  uint16_t m_cells[kColumns * kRows];
};

}  // namespace ett::drivers
