// port_lines.h: the capture loop's Source for a parallel port: one `in` from the data register.
#pragma once

#include <stdint.h>

#include "arch/x86/idle_poll.h"
#include "arch/x86/io.h"

namespace ett::drivers {

// The port in a register: in (%dx),%al.
struct PortLines {
  uint16_t port;
  [[gnu::always_inline]] uint8_t read() const { return x86::in8(port); }
  // The capture loop's idle step (capture/capture_loop.h).
  template <bool kFiltered>
  [[gnu::always_inline]] uint8_t idle(uint32_t last, uint32_t mask, uint32_t& countdown) const {
    return x86::idle_poll_port<kFiltered>(port, last, mask, countdown);
  }
};

}  // namespace ett::drivers
