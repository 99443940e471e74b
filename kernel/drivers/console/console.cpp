// console.cpp: formats into a line buffer (lib/format) and writes it to serial and VGA.
#include "drivers/console/console.h"

#include <stdarg.h>

#include "drivers/console/serial_port.h"
#include "drivers/console/vga_text.h"
#include "lib/format.h"
#include "lib/text.h"

namespace ett::console {

namespace {
drivers::SerialPort g_serial{drivers::SerialPort::kCom1};
drivers::VgaText g_screen;
bool g_screen_output = true;

void write_both(const char* text, size_t length) {
  g_serial.write(text, length);
  if (g_screen_output) g_screen.write(text, length);
}
}  // namespace

void init() {
  g_serial.init();
  g_screen.clear();
}

void set_screen_output(bool on) {
  if (on && !g_screen_output) g_screen.clear();  // whatever was drawn is not the console's
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
