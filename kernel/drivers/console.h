// console.h: the kernel's output: every line goes to both COM1 (the harness reads it) and the VGA screen.
#pragma once

#include <stddef.h>

namespace ett::console {

void init();
void write(const char* text);
[[gnu::format(printf, 1, 2)]] void print(const char* format, ...);

}  // namespace ett::console
