// cmos_rtc.h: reads the wall-clock time from the CMOS real-time clock (ports 0x70/0x71).
#pragma once

#include <stdint.h>

namespace ett::x86 {

class CmosRtc {
 public:
  // Seconds since 1970, or 0 when the clock cannot be read consistently or holds an invalid date.
  static uint64_t read_unix_time();

 private:
  enum Port : uint16_t {
    kIndex = 0x70,
    kData = 0x71,
  };
  enum Register : uint8_t {
    kSeconds = 0x00,
    kMinutes = 0x02,
    kHours = 0x04,
    kDayOfMonth = 0x07,
    kMonth = 0x08,
    kYear = 0x09,
    kStatusA = 0x0A,
    kStatusB = 0x0B,
  };
  enum Bits : uint8_t {
    kNmiDisable = 0x80,        // in the index port: keep NMIs off while a register is selected
    kUpdateInProgress = 0x80,  // in status A: the registers are changing (lasts up to ~2 ms each second)
  };
  static constexpr uint32_t kMaxPolls = 1'000'000;
  static constexpr uint32_t kMaxAttempts = 5;

  static uint8_t read(Register reg);
  static bool wait_until_not_updating();
};

}  // namespace ett::x86
