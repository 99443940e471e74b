// text_screen.cpp: rows written straight into VGA text memory.
#include "ui/text_screen.h"

#include <stdarg.h>

#include "lib/format.h"

namespace ett::ui {

void TextScreen::draw_row(uint32_t row, const char* text, Attribute attribute) {
  if (row >= kRows) return;
  volatile uint16_t* cells = reinterpret_cast<volatile uint16_t*>(kBufferAddress) + row * kColumns;
  uint32_t column = 0;
  for (; column < kColumns && text[column] != '\0'; ++column)
    cells[column] = static_cast<uint16_t>((attribute << 8) | static_cast<uint8_t>(text[column]));
  for (; column < kColumns; ++column) cells[column] = static_cast<uint16_t>((attribute << 8) | ' ');
}

void TextScreen::print_row(uint32_t row, Attribute attribute, const char* format, ...) {
  char line[kColumns + 1];
  va_list args;
  va_start(args, format);
  lib::vformat(line, sizeof(line), format, args);
  va_end(args);
  draw_row(row, line, attribute);
}

void TextScreen::clear() {
  for (uint32_t row = 0; row < kRows; ++row) draw_row(row, "");
}

}  // namespace ett::ui
