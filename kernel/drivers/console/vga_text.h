// vga_text.h: the 80x25 VGA text screen at 0xB8000, written like a terminal that scrolls.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ett::drivers {

class VgaText {
 public:
  static constexpr uint32_t kColumns = 80;
  static constexpr uint32_t kRows = 25;

  void clear();
  void write(const char* text, size_t length);

 private:
  static constexpr uintptr_t kBufferAddress = 0xB8000;
  static constexpr uint8_t kLightGreyOnBlack = 0x07;

  void put(char c);
  void new_line();
  static volatile uint16_t* cells() { return reinterpret_cast<volatile uint16_t*>(kBufferAddress); }
  static constexpr uint16_t cell(char c) {
    return static_cast<uint16_t>((kLightGreyOnBlack << 8) | static_cast<uint8_t>(c));
  }

  uint32_t m_row = 0;
  uint32_t m_column = 0;
};

}  // namespace ett::drivers
