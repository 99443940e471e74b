// pit.cpp: TSC calibration against PIT channel 2 in one-shot mode, polled through port 0x61.
#include "arch/x86/pit.h"

namespace ett::x86 {

Result<Pit::Round> Pit::measure_round(lib::IoPorts& ports, Ticks& ticks, uint64_t deadline_ticks) {
  ports.out8(kPortB, static_cast<uint8_t>((ports.in8(kPortB) & ~kSpeakerData) | kGate2));
  ports.out8(kCommand, kSelectChannel2 | kAccessLowHigh | kModeInterruptOnTerminalCount | kBinaryCounter);
  ports.out8(kChannel2Data, kCount & 0xFF);
  const uint64_t before_start = ticks.now();
  ports.out8(kChannel2Data, kCount >> 8);  // the one-shot starts with this write
  const uint64_t after_start = ticks.now();
  // OUT2 rose after the last poll that saw it low began, and before the first poll that saw it high ended.
  uint64_t before_low_poll = after_start;
  for (bool first = true;; first = false) {
    const uint64_t before_poll = ticks.now();
    if (ports.in8(kPortB) & kOut2) {
      const uint64_t after_high_poll = ticks.now();
      if (first) return fail("PIT channel 2 output was already high after loading the count");
      return Round{before_low_poll - after_start, after_high_poll - before_start};
    }
    if (before_poll - before_start > deadline_ticks)
      return fail("timed out: PIT channel 2 does not count (clock-gated or absent)");
    before_low_poll = before_poll;
  }
}

Result<lib::TscEstimate> Pit::calibrate_tsc(lib::IoPorts& ports, Ticks& ticks, uint64_t max_tsc_hz) {
  const uint8_t saved_port_b = ports.in8(kPortB);
  const uint64_t deadline_ticks = round_deadline_ticks(max_tsc_hz);
  Round best{0, UINT64_MAX};
  for (uint32_t i = 0; i < kRounds; ++i) {
    auto round = measure_round(ports, ticks, deadline_ticks);
    if (!round) {
      ports.out8(kPortB, saved_port_b);
      return round.failure();
    }
    if (round->high - round->low < best.high - best.low) best = *round;
  }
  ports.out8(kPortB, saved_port_b);
  return lib::estimate_tsc(lib::Bracket{best.low, best.high, kCount, uint64_t{kCount} + 1}, kRate);
}

}  // namespace ett::x86
