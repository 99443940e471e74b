// parallel_port.cpp: opening a parallel port for input (bidirectional) or loopback, and restoring it.
#include "drivers/parallel_port.h"

namespace ett::drivers {

Result<ParallelPort> ParallelPort::open(uint16_t base, Mode mode) {
  const x86::IoWindow port(base);
  const uint8_t saved = port.in8(kControl);
  if (saved == 0xFF && port.in8(kStatus) == 0xFF && port.in8(kData) == 0xFF)
    return fail("no parallel port answers at this I/O base (all registers read 0xFF)");
  // No interrupts, not in reset, strobe/autofeed/select-in released; only the direction bit differs.
  const uint8_t control = mode == Mode::Input ? uint8_t{kInit | kDirectionInput} : uint8_t{kInit};
  port.out8(kControl, control);
  return ParallelPort(base, saved);
}

void ParallelPort::restore(uint16_t base, uint8_t saved_control) {
  x86::IoWindow(base).out8(kControl, saved_control);
}

}  // namespace ett::drivers
