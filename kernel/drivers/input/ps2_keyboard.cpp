// ps2_keyboard.cpp: polled reads from the 8042 controller's output buffer.
#include "drivers/input/ps2_keyboard.h"

namespace ett::drivers {

bool Ps2Keyboard::key_pending() const {
  for (;;) {
    const uint8_t status = m_controller.in8(kStatus);
    if (!(status & kOutputFull)) return false;
    if (!(status & kFromAux)) return true;
    m_data.in8(kData);  // a mouse byte: not ours
  }
}

uint8_t Ps2Keyboard::read_scancode() const {
  return key_pending() ? m_data.in8(kData) : 0;
}

void Ps2Keyboard::drain() const {
  for (int i = 0; i < 64 && key_pending(); ++i) m_data.in8(kData);
}

}  // namespace ett::drivers
