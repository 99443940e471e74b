// ps2_presence_cpu.cpp: the kernel's keyboard check on the real ports, its deadlines on the TSC.
#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "drivers/input/ps2_presence.h"

namespace ett::drivers {

namespace {
class TscDeadlineClock final : public Ps2Presence::Clock {
 public:
  uint64_t now() override { return x86::rdtsc(); }
};
}  // namespace

Status Ps2Presence::check(uint64_t tsc_hz) {
  x86::CpuIoPorts io;
  TscDeadlineClock clock;
  return check(io, clock, tsc_hz / 1000);
}

}  // namespace ett::drivers
