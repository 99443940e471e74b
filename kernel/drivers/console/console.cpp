// console.cpp: formats into a line buffer (lib/format) and writes it to serial and to the screen as a
// terminal that wraps and scrolls.
#include "drivers/console/console.h"

#include <stdarg.h>

#include "drivers/console/serial_port.h"
#include "drivers/console/vga_text.h"
#include "lib/format.h"
#include "lib/text.h"
#include "runtime/new.h"

namespace ett::console {

namespace {

constexpr uint8_t kLightGreyOnBlack = 0x07;
using drivers::CellScreen;

drivers::SerialPort g_serial{drivers::SerialPort::kCom1};
drivers::VgaText g_vga;
// The framebuffer console holds a 4 KiB copy of the cells: built in place once the geometry is known.
alignas(drivers::FramebufferText) uint8_t g_framebuffer_storage[sizeof(drivers::FramebufferText)];
CellScreen* g_screen = nullptr;
char g_screen_name[48] = "none";
bool g_screen_output = true;
uint32_t g_row = 0;
uint32_t g_column = 0;

void clear_screen() {
  for (uint32_t row = 0; row < CellScreen::kRows; ++row)
    for (uint32_t column = 0; column < CellScreen::kColumns; ++column)
      g_screen->put(row, column, ' ', kLightGreyOnBlack);
  g_row = g_column = 0;
}

void new_line() {
  g_column = 0;
  if (g_row + 1 < CellScreen::kRows)
    ++g_row;
  else
    g_screen->scroll_up(kLightGreyOnBlack);
}

void put(char c) {
  if (c == '\n') return new_line();
  if (c == '\r') {
    g_column = 0;
    return;
  }
  if (g_column == CellScreen::kColumns) new_line();
  g_screen->put(g_row, g_column++, c, kLightGreyOnBlack);
}

void write_both(const char* text, size_t length) {
  g_serial.write(text, length);
  if (g_screen && g_screen_output)
    for (size_t i = 0; i < length; ++i) put(text[i]);
}

}  // namespace

void init() {
  g_serial.init();
}

void use_vga_text() {
  g_screen = &g_vga;
  lib::copy_text(g_screen_name, sizeof(g_screen_name), "VGA text");
  clear_screen();
}

void use_framebuffer(const drivers::FramebufferGeometry& geometry) {
  auto opened = drivers::FramebufferText::open(geometry);
  if (!opened) {
    g_screen = nullptr;
    lib::copy_text(g_screen_name, sizeof(g_screen_name), "none");
    print("ETT: no screen: %s (output on serial only)\n", opened.error().message);
    return;
  }
  g_screen = new (g_framebuffer_storage) drivers::FramebufferText(ett::move(*opened));
  lib::format(g_screen_name, sizeof(g_screen_name), "framebuffer %ux%ux%u", geometry.width, geometry.height,
              geometry.format.bytes_per_pixel * 8u);
  clear_screen();
}

drivers::CellScreen* screen() {
  return g_screen;
}

const char* screen_name() {
  return g_screen_name;
}

void set_screen_output(bool on) {
  if (on && !g_screen_output && g_screen) clear_screen();  // whatever was drawn is not the console's
  g_screen_output = on;
}

void write(const char* text) {
  write_both(text, lib::text_length(text));
}

void print(const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  const size_t length = lib::vformat(line, sizeof(line), format, args);
  va_end(args);
  write_both(line, length < sizeof(line) ? length : sizeof(line) - 1);
}

}  // namespace ett::console
