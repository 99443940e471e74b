// text_screen.h: whole-row drawing on the console's 80x25 screen (VGA text or framebuffer) for the start
// screen and the analysis stage (the console itself is a scrolling terminal; these screens place every row).
#pragma once

#include <stdint.h>

namespace ett::ui {

class TextScreen {
 public:
  static constexpr uint32_t kColumns = 80;
  static constexpr uint32_t kRows = 25;
  enum Attribute : uint8_t {
    kNormal = 0x07,   // light grey on black
    kInverse = 0x70,  // black on light grey: title and key lines
    kBright = 0x0F,   // white on black: messages
    kWarning = 0x4F,  // white on red: what must not be missed (a TSC that is not invariant)
  };

  // Writes `text` at the start of `row`, cut at 80 columns, and fills the rest of the row with spaces.
  static void draw_row(uint32_t row, const char* text, Attribute attribute = kNormal);
  // printf-style, then draw_row.
  [[gnu::format(printf, 3, 4)]] static void print_row(uint32_t row, Attribute attribute, const char* format,
                                                      ...);
  static void clear();
};

}  // namespace ett::ui
