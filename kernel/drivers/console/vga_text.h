// vga_text.h: the 80x25 VGA text screen at 0xB8000 (BIOS boots) as a CellScreen.
#pragma once

#include <stdint.h>

#include "drivers/console/cell_screen.h"

namespace ett::drivers {

class VgaText final : public CellScreen {
 public:
  void put(uint32_t row, uint32_t column, char c, uint8_t attribute) override;
  void scroll_up(uint8_t attribute) override;

 private:
  static constexpr uintptr_t kBufferAddress = 0xB8000;

  static volatile uint16_t* cells() { return reinterpret_cast<volatile uint16_t*>(kBufferAddress); }
  static constexpr uint16_t cell(char c, uint8_t attribute) {
    return static_cast<uint16_t>((attribute << 8) | static_cast<uint8_t>(c));
  }
};

}  // namespace ett::drivers
