// cmos_rtc.cpp: reads the RTC twice between update cycles until two reads agree, then decodes it.
#include "arch/x86/cmos_rtc.h"

#include "arch/x86/io.h"
#include "lib/rtc_time.h"

namespace ett::x86 {

uint8_t CmosRtc::read(Register reg) {
  out8(kIndex, static_cast<uint8_t>(kNmiDisable | static_cast<uint8_t>(reg)));
  return in8(kData);
}

bool CmosRtc::wait_until_not_updating() {
  for (uint32_t poll = 0; poll < kMaxPolls; ++poll)
    if (!(read(kStatusA) & kUpdateInProgress)) return true;
  return false;
}

uint64_t CmosRtc::read_unix_time() {
  auto sample = [] {
    return lib::RtcRegisters{read(kSeconds), read(kMinutes), read(kHours),  read(kDayOfMonth),
                             read(kMonth),   read(kYear),    read(kStatusB)};
  };
  for (uint32_t attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (!wait_until_not_updating()) return 0;
    const lib::RtcRegisters first = sample();
    if (!wait_until_not_updating()) return 0;
    if (sample() == first) return lib::rtc_to_unix(first);
  }
  return 0;
}

}  // namespace ett::x86
