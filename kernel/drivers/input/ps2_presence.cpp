// ps2_presence.cpp: one harmless command to the 8042, every wait against a TSC deadline.
#include "drivers/input/ps2_presence.h"

#include "arch/x86/cpu.h"

namespace ett::drivers {

Status Ps2Presence::check(uint64_t tsc_hz) {
  const x86::IoWindow data{kDataPort};
  const x86::IoWindow controller{kControllerPort};
  const uint64_t step_ticks = tsc_hz / 1000 * kTimeoutMs;
  if (controller.in8(kStatus) == kFloatingBus) return fail("port 0x64 reads 0xFF: no controller there");
  // Keys pressed before (or mouse bytes) would be taken for the reply.
  for (uint32_t i = 0; i < kMaxStaleBytes && (controller.in8(kStatus) & kOutputFull); ++i) data.in8(kData);

  uint64_t deadline = x86::rdtsc() + step_ticks;
  while (controller.in8(kStatus) & kInputFull)
    if (x86::rdtsc() > deadline) return fail("the 8042 does not take commands (input buffer stays full)");
  controller.out8(kCommand, kReadConfiguration);
  deadline = x86::rdtsc() + step_ticks;
  while (!(controller.in8(kStatus) & kOutputFull))
    if (x86::rdtsc() > deadline) return fail("the 8042 does not answer a command");
  data.in8(kData);
  return {};
}

}  // namespace ett::drivers
