// pit.h: measures the TSC frequency against the 8254 PIT's channel 2 (gated through port 0x61; no IRQ).
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/io_ports.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

class Pit {
 public:
  // The TSC as the PIT calibration reads it: the kernel passes the CPU's, a host test a model.
  class Ticks {
   public:
    virtual uint64_t now() = 0;

   protected:
    ~Ticks() = default;
  };

  // Runs kRounds one-shots of ~50 ms each and keeps the one whose start and end are bracketed most tightly
  // by TSC reads (a round disturbed by an SMI, or under QEMU by the host descheduling the vCPU, has a wide
  // bracket). The PIT crystal's own tolerance (typically +-50..100 ppm on real boards) is not included: the
  // TSC is calibrated against the PIT, not against UTC. The uncertainty is half the range of rates the best
  // round's bracket allows (mode 0 raises OUT2 N+1 clock edges after the count is written: N to N+1 periods).
  //
  // `max_tsc_hz` bounds the wait: a round whose OUT2 has not risen after round_deadline_ticks(max_tsc_hz)
  // TSC ticks fails (a clock-gated or absent PIT never counts), so the whole call ends within that many
  // ticks after its first round starts.
  static Result<lib::TscEstimate> calibrate_tsc(lib::IoPorts& ports, Ticks& ticks, uint64_t max_tsc_hz);

  static constexpr uint32_t kInputHz = 1193182;  // 14.31818 MHz / 12
  static constexpr uint16_t kCount = 59659;      // 50 ms at kInputHz
  // Three: each reference's rounds add 50 ms to the boot; a disturbed round is rare, two in a row rarer, and
  // the three references check each other.
  static constexpr uint32_t kRounds = 3;
  static constexpr lib::ReferenceRate kRate{kInputHz, 1};
  // A round is late after 4 times its 50 ms at `max_tsc_hz`.
  static constexpr uint32_t kRoundDeadlineMs = 200;
  static constexpr uint64_t round_deadline_ticks(uint64_t max_tsc_hz) {
    return max_tsc_hz / 1000 * kRoundDeadlineMs;
  }

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

 private:
  enum CommandBits : uint8_t {
    kSelectChannel2 = 0b10 << 6,
    kAccessLowHigh = 0b11 << 4,
    kModeInterruptOnTerminalCount = 0b000 << 1,  // mode 0: OUT low on load, high after kCount clocks
    kBinaryCounter = 0,
  };

  // The TSC ticks that kCount PIT clocks took lie in [low, high].
  struct Round {
    uint64_t low;
    uint64_t high;
  };
  static Result<Round> measure_round(lib::IoPorts& ports, Ticks& ticks, uint64_t deadline_ticks);
};

}  // namespace ett::x86
