// text_screen.cpp: rows written cell by cell onto the console's screen (VGA text or framebuffer).
#include "ui/text_screen.h"

#include <stdarg.h>

#include "drivers/console/console.h"
#include "lib/format.h"

namespace ett::ui {

void TextScreen::draw_row(uint32_t row, const char* text, Attribute attribute) {
  drivers::CellScreen* screen = console::screen();
  if (row >= kRows || !screen) return;
  uint32_t column = 0;
  for (; column < kColumns && text[column] != '\0'; ++column)
    screen->put(row, column, text[column], attribute);
  for (; column < kColumns; ++column) screen->put(row, column, ' ', attribute);
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
