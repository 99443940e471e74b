// gdt.h: the kernel's own global descriptor table (flat 4 GiB code and data), loaded first thing in
// kernel_main.
//
// Multiboot leaves the loader's GDT in place and says it may be anywhere: the capture buffer (all free RAM)
// could overwrite it, and the next segment load (an interrupt gate, a far jump) would then read garbage.
#pragma once

#include <stdint.h>

namespace ett::x86 {

class Gdt {
 public:
  enum Selector : uint16_t {
    kNull = 0x00,
    kCode = 0x08,
    kData = 0x10,
  };

  // Loads the table and reloads every segment register with its selectors (cs through a far jump).
  static void load();
};

}  // namespace ett::x86
