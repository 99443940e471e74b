// counter_calibration.h: TSC calibration against a free-running counter (ACPI PM timer, HPET): the best of five
// ~50 ms windows, each end a counter read bracketed by two TSC reads.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "ett/result.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

constexpr uint32_t kCounterRounds = 5;
constexpr uint32_t kCounterWindowMs = 50;

// `Counter` has `uint32_t read() const` (the counter's low 32 bits, or all of a 24-bit one). Each window ends
// at the first read `window_counts` or more after its start; the window whose two reads were bracketed most
// tightly (least disturbed by an SMI or, under QEMU, by the host descheduling the vCPU) gives the estimate.
// A window longer than `deadline_ticks` means the counter stopped; a counter that steps back is broken.
template <typename Counter>
Result<lib::TscEstimate> calibrate_against_counter(const Counter& counter, uint32_t bits, uint32_t window_counts,
                                                   uint64_t deadline_ticks, lib::ReferenceRate rate) {
  const uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  auto read = [&counter] {
    lib::CounterRead r;
    r.tsc_before = rdtsc();
    r.counter = counter.read();
    r.tsc_after = rdtsc();
    return r;
  };
  lib::Bracket best{};
  uint64_t best_width = UINT64_MAX;
  for (uint32_t round = 0; round < kCounterRounds; ++round) {
    const lib::CounterRead start = read();
    uint32_t last_elapsed = 0;
    for (;;) {
      const lib::CounterRead now = read();
      const uint32_t elapsed = (now.counter - start.counter) & mask;
      if (elapsed < last_elapsed) return fail("the counter went backwards");
      last_elapsed = elapsed;
      if (elapsed >= window_counts) {
        const uint64_t width = (start.tsc_after - start.tsc_before) + (now.tsc_after - now.tsc_before);
        if (width < best_width) {
          best_width = width;
          best = lib::counter_bracket(start, now, bits);
        }
        break;
      }
      if (now.tsc_after - start.tsc_before > deadline_ticks) return fail("timed out: the counter does not count");
    }
  }
  return lib::estimate_tsc(best, rate);
}

}  // namespace ett::x86
