// pit.cpp: TSC calibration against PIT channel 2 in one-shot mode, polled through port 0x61.
#include "arch/x86/pit.h"

#include "arch/x86/cpu.h"
#include "arch/x86/io.h"

namespace ett::x86 {

Result<Pit::Round> Pit::measure_round() {
  out8(kPortB, static_cast<uint8_t>((in8(kPortB) & ~kSpeakerData) | kGate2));
  out8(kCommand, kSelectChannel2 | kAccessLowHigh | kModeInterruptOnTerminalCount | kBinaryCounter);
  out8(kChannel2Data, kCount & 0xFF);
  const uint64_t before_start = rdtsc();
  out8(kChannel2Data, kCount >> 8);  // the one-shot starts with this write
  const uint64_t after_start = rdtsc();
  // OUT2 rose after the last poll that saw it low began, and before the first poll that saw it high ended.
  uint64_t before_low_poll = after_start;
  for (uint32_t poll = 0; poll < kMaxPolls; ++poll) {
    const uint64_t before_poll = rdtsc();
    if (in8(kPortB) & kOut2) {
      const uint64_t after_high_poll = rdtsc();
      if (poll == 0) return fail("PIT channel 2 output was already high after loading the count");
      return Round{before_low_poll - after_start, after_high_poll - before_start};
    }
    before_low_poll = before_poll;
  }
  return fail("timed out waiting for PIT channel 2 to reach terminal count");
}

Result<lib::TscEstimate> Pit::calibrate_tsc() {
  const uint8_t saved_port_b = in8(kPortB);
  Round best{0, UINT64_MAX};
  for (uint32_t i = 0; i < kRounds; ++i) {
    auto round = measure_round();
    if (!round) {
      out8(kPortB, saved_port_b);
      return round.failure();
    }
    if (round->high - round->low < best.high - best.low) best = *round;
  }
  out8(kPortB, saved_port_b);
  return lib::estimate_tsc(lib::Bracket{best.low, best.high, kCount, uint64_t{kCount} + 1}, kRate);
}

}  // namespace ett::x86
