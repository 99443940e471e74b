// tsc_clock.h: the TSC as the capture loop's Clock, ordered after the probe read or not.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu.h"

namespace ett::x86 {

// Timestamps an event: lfence keeps RDTSC from running ahead of the load that saw the change (SSE2 CPUs).
struct OrderedTscClock {
  [[gnu::always_inline]] uint64_t now() const { return rdtsc_after_loads(); }
};

// Plain RDTSC: for deadlines, and for events on CPUs without lfence (before the Pentium 4).
struct TscClock {
  [[gnu::always_inline]] uint64_t now() const { return rdtsc(); }
};

}  // namespace ett::x86
