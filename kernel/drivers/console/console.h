// console.h: the kernel's output: every line goes to COM1 (the harness reads it) and to the screen, which is
// VGA text memory on a BIOS boot and the framebuffer console when the loader set up a graphics mode (UEFI).
#pragma once

#include <stddef.h>

#include "drivers/console/cell_screen.h"
#include "drivers/console/framebuffer_text.h"

namespace ett::console {

// COM1 only: the screen is chosen once the boot information is read (use_vga_text / use_framebuffer).
void init();
void use_vga_text();
// Falls back to no screen (serial only) and says why when the framebuffer cannot be drawn on.
void use_framebuffer(const drivers::FramebufferGeometry& geometry);
// The screen the start screen and the analysis stage draw on; nullptr when there is none.
drivers::CellScreen* screen();
// "VGA text", "framebuffer 800x600x32" or "none".
const char* screen_name();
// Whether lines also go to the screen (on by default). The start screen and the analysis stage draw the
// screen themselves and turn it off; serial keeps every line.
void set_screen_output(bool on);
void write(const char* text);
[[gnu::format(printf, 1, 2)]] void print(const char* format, ...);

}  // namespace ett::console
