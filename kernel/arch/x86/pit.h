// pit.h: measures the TSC frequency against the 8254 PIT's channel 2 (gated through port 0x61; no IRQ).
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

class Pit {
 public:
  // Runs kRounds one-shots of ~50 ms each and keeps the one whose start and end are bracketed most tightly
  // by TSC reads (a round disturbed by an SMI, or under QEMU by the host descheduling the vCPU, has a wide
  // bracket). The PIT crystal's own tolerance (typically +-50..100 ppm on real boards) is not included: the
  // TSC is calibrated against the PIT, not against UTC. The uncertainty is half the range of rates the best
  // round's bracket allows (mode 0 raises OUT2 N+1 clock edges after the count is written: N to N+1 periods).
  static Result<lib::TscEstimate> calibrate_tsc();

  static constexpr uint32_t kInputHz = 1193182;  // 14.31818 MHz / 12
  static constexpr uint16_t kCount = 59659;      // 50 ms at kInputHz
  // Three: each reference's rounds add 50 ms to the boot; a disturbed round is rare, two in a row rarer, and
  // the three references check each other.
  static constexpr uint32_t kRounds = 3;
  static constexpr lib::ReferenceRate kRate{kInputHz, 1};

 private:
  enum Port : uint16_t {
    kChannel2Data = 0x42,
    kCommand = 0x43,
    kPortB = 0x61,  // system control port B: gate and output of channel 2, speaker enable
  };
  enum PortBBit : uint8_t {
    kGate2 = 1u << 0,
    kSpeakerData = 1u << 1,
    kOut2 = 1u << 5,
  };
  enum CommandBits : uint8_t {
    kSelectChannel2 = 0b10 << 6,
    kAccessLowHigh = 0b11 << 4,
    kModeInterruptOnTerminalCount = 0b000 << 1,  // mode 0: OUT low on load, high after kCount clocks
    kBinaryCounter = 0,
  };
  // Bounds each wait for OUT2 by polls, not time (the TSC rate is what is being measured): a port read takes
  // well over 2.5 ns on any PC, so 20 M polls are always more than 50 ms.
  static constexpr uint32_t kMaxPolls = 20'000'000;

  // The TSC ticks that kCount PIT clocks took lie in [low, high].
  struct Round {
    uint64_t low;
    uint64_t high;
  };
  static Result<Round> measure_round();
};

}  // namespace ett::x86
