// vga_text.cpp: character output, line wrap and scrolling on the VGA text screen.
#include "drivers/console/vga_text.h"

namespace ett::drivers {

void VgaText::clear() {
  for (uint32_t i = 0; i < kColumns * kRows; ++i) cells()[i] = cell(' ');
  m_row = 0;
  m_column = 0;
}

void VgaText::write(const char* text, size_t length) {
  for (size_t i = 0; i < length; ++i) put(text[i]);
}

void VgaText::put(char c) {
  if (c == '\n') {
    new_line();
    return;
  }
  if (c == '\r') {
    m_column = 0;
    return;
  }
  if (m_column == kColumns) new_line();
  cells()[m_row * kColumns + m_column++] = cell(c);
}

void VgaText::new_line() {
  m_column = 0;
  if (m_row + 1 < kRows) {
    ++m_row;
    return;
  }
  volatile uint16_t* screen = cells();
  for (uint32_t i = 0; i < kColumns * (kRows - 1); ++i) screen[i] = screen[i + kColumns];
  for (uint32_t i = 0; i < kColumns; ++i) screen[kColumns * (kRows - 1) + i] = cell(' ');
}

}  // namespace ett::drivers
