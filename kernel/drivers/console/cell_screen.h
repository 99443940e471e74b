// cell_screen.h: an 80x25 grid of character cells with VGA attributes, the one interface the console and the
// start/analysis screens draw on; VGA text memory and the framebuffer console implement it.
#pragma once

#include <stdint.h>

namespace ett::drivers {

class CellScreen {
 public:
  static constexpr uint32_t kColumns = 80;
  static constexpr uint32_t kRows = 25;

  // `attribute` is a VGA text attribute: background colour in bits 4-6, foreground in bits 0-3.
  virtual void put(uint32_t row, uint32_t column, char c, uint8_t attribute) = 0;
  // Moves every row up by one and blanks the last row with `attribute`.
  virtual void scroll_up(uint8_t attribute) = 0;

 protected:
  ~CellScreen() = default;
};

}  // namespace ett::drivers
