// vga_text.cpp: cells written straight into VGA text memory; scrolling copies the rows up.
#include "drivers/console/vga_text.h"

namespace ett::drivers {

void VgaText::put(uint32_t row, uint32_t column, char c, uint8_t attribute) {
  if (row < kRows && column < kColumns) cells()[row * kColumns + column] = cell(c, attribute);
}

void VgaText::scroll_up(uint8_t attribute) {
  volatile uint16_t* screen = cells();
  for (uint32_t i = 0; i < kColumns * (kRows - 1); ++i) screen[i] = screen[i + kColumns];
  for (uint32_t i = 0; i < kColumns; ++i) screen[kColumns * (kRows - 1) + i] = cell(' ', attribute);
}

}  // namespace ett::drivers
