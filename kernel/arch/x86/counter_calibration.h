// counter_calibration.h: TSC calibration against a free-running counter (ACPI PM timer, HPET): the best of
// three ~50 ms windows, each end a counter read bracketed by two TSC reads.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "ett/result.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

// Three rounds, as for the PIT (arch/x86/pit.h): the calibration is most of the kernel's boot time.
constexpr uint32_t kCounterRounds = 3;
constexpr uint32_t kCounterWindowMs = 50;

// Reads taken at each end of a window; the one bracketed most tightly by its two TSC reads is kept, so that a
// read stretched by an SMI (or under QEMU by the host descheduling the vCPU) does not widen the result.
constexpr uint32_t kReadsPerEnd = 32;

// How a window is bounded and read.
struct CounterTiming {
  uint64_t deadline_ticks;  // a window longer than this means the counter stopped
  // lfence before each TSC read (SSE2 CPUs): an uncached MMIO load (the HPET) may otherwise complete after
  // the following RDTSC, or start before the preceding one, and the bracket would not contain the read.
  bool ordered;
};

// `Counter` has `uint32_t read() const` (the counter's low 32 bits, or all of a 24-bit one). A window runs
// from the tightest of kReadsPerEnd reads at its start to the tightest of kReadsPerEnd reads once
// `window_counts` have passed; the window with the narrowest total bracket gives the estimate. A window
// longer than `timing.deadline_ticks` means the counter stopped; a counter that steps back is broken.
template <typename Counter>
Result<lib::TscEstimate> calibrate_against_counter(const Counter& counter, uint32_t bits,
                                                   uint32_t window_counts, const CounterTiming& timing,
                                                   lib::ReferenceRate rate) {
  const uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  auto read = [&counter, ordered = timing.ordered] {
    lib::CounterRead r;
    r.tsc_before = ordered ? rdtsc_fenced() : rdtsc();
    r.counter = counter.read();
    r.tsc_after = ordered ? rdtsc_fenced() : rdtsc();
    return r;
  };
  auto tightest = [&read] {
    lib::CounterRead best = read();
    for (uint32_t i = 1; i < kReadsPerEnd; ++i) {
      const lib::CounterRead r = read();
      if (r.tsc_after - r.tsc_before < best.tsc_after - best.tsc_before) best = r;
    }
    return best;
  };
  lib::Bracket best{};
  uint64_t best_width = UINT64_MAX;
  for (uint32_t round = 0; round < kCounterRounds; ++round) {
    const lib::CounterRead first = read();
    const lib::CounterRead start = tightest();
    uint32_t last_elapsed = 0;
    lib::CounterRead run = start;  // the first read of the latest run of equal readings
    uint64_t held_ticks = 0;       // the longest time the counter certainly kept one value
    for (;;) {
      const lib::CounterRead now = read();
      if (now.counter != run.counter) {
        run = now;
      } else if (now.tsc_before > run.tsc_after && now.tsc_before - run.tsc_after > held_ticks) {
        held_ticks = now.tsc_before - run.tsc_after;
      }
      const uint32_t elapsed = (now.counter - start.counter) & mask;
      if (elapsed < last_elapsed) return fail("the counter went backwards");
      last_elapsed = elapsed;
      if (elapsed >= window_counts) break;
      if (now.tsc_after - first.tsc_before > timing.deadline_ticks)
        return fail("timed out: the counter does not count");
    }
    const lib::CounterRead end = tightest();
    if (((end.counter - start.counter) & mask) < last_elapsed) return fail("the counter went backwards");
    // A value kept longer than one count's time means the counter moves in steps of several counts (an
    // emulator computing it from a coarser clock): the readings are then that many counts uncertain.
    const uint64_t counts = (end.counter - start.counter) & mask;
    const uint64_t window_ticks = end.tsc_before > start.tsc_after ? end.tsc_before - start.tsc_after : 0;
    const uint64_t step = window_ticks ? 1 + held_ticks * counts / window_ticks : 1;
    const uint64_t width = (start.tsc_after - start.tsc_before) + (end.tsc_after - end.tsc_before);
    if (width < best_width) {
      best_width = width;
      best = lib::counter_bracket(start, end, bits, step > 0xFFFF ? 0xFFFF : static_cast<uint32_t>(step));
    }
  }
  return lib::estimate_tsc(best, rate);
}

}  // namespace ett::x86
