// port_lines.h: the capture loop's Source for a parallel port: one `in` from the data register.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"

namespace ett::drivers {

// The port in a register: in (%dx),%al.
struct PortLines {
  uint16_t port;
  [[gnu::always_inline]] uint8_t read() const { return x86::in8(port); }
};

}  // namespace ett::drivers
