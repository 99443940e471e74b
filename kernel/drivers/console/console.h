// console.h: the kernel's output: every line goes to both COM1 (the harness reads it) and the VGA screen.
#pragma once

#include <stddef.h>

namespace ett::console {

void init();
// Whether lines also go to the VGA screen (on by default). The start screen and the analysis stage draw the
// screen themselves and turn it off; serial keeps every line.
void set_screen_output(bool on);
void write(const char* text);
[[gnu::format(printf, 1, 2)]] void print(const char* format, ...);

}  // namespace ett::console
