// tsc_reference.h: the arithmetic of TSC calibration against a reference timer (PIT, ACPI PM timer, HPET): a
// rate and its uncertainty from bracketed measurements, and the choice among the references that worked.
// Hardware-free, so the host tests run it on made-up measurements.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::lib {

// a * b / c rounded down, without overflow (a 128-bit product; i686 has no __int128). c must be non-zero and
// the quotient must fit in 64 bits.
uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c);

// A reference timer's rate as a fraction, counts per second = numerator / denominator: the PIT 1193182 / 1,
// the PM timer 3579545 / 1, the HPET 10^15 / (its period in femtoseconds).
struct ReferenceRate {
  uint64_t numerator;
  uint64_t denominator;
};

// A measurement: the TSC advanced by [tsc_low, tsc_high] ticks while the reference counted [counts_low,
// counts_high] of its clocks.
struct Bracket {
  uint64_t tsc_low;
  uint64_t tsc_high;
  uint64_t counts_low;
  uint64_t counts_high;
};

struct TscEstimate {
  uint64_t hz;               // the middle of the range of rates the bracket allows
  uint32_t uncertainty_ppm;  // half that range, relative to hz, rounded up
};

// The TSC rates the bracket allows are [tsc_low / (counts_high / rate), tsc_high / (counts_low / rate)].
// Fails on an empty or inverted bracket, or a rate below 1 MHz (no TSC is that slow: a broken timer).
Result<TscEstimate> estimate_tsc(const Bracket& bracket, ReferenceRate rate);

// One read of a free-running counter between two TSC reads.
struct CounterRead {
  uint64_t tsc_before;
  uint32_t counter;
  uint64_t tsc_after;
};

// The bracket between two reads of a counter `bits` wide (24, 32; wider counters are read as their low 32
// bits). The counter is read as whole counts, so the counts elapsed between the reads are within `step` of
// the difference of the readings: 1 for a counter that moves count by count, more for one that moves in
// steps of several counts (Bochs computes its ACPI PM timer from a microsecond clock: 3-4 counts a step).
Bracket counter_bracket(const CounterRead& start, const CounterRead& end, uint32_t bits, uint32_t step = 1);

// The references in the order the kernel prefers them: the HPET (MMIO, fine period), the ACPI PM timer
// (3.58 MHz, a slow port read), the PIT (1.19 MHz, one-shot through port 0x61). The first that works and
// agrees with another is used.
enum class Reference : uint32_t { Hpet = 0, PmTimer = 1, Pit = 2 };
constexpr uint32_t kReferenceCount = 3;

// Two references from different crystals may differ by their tolerances (about +-100 ppm each) on top of
// the measured uncertainties.
constexpr uint32_t kAgreementSlackPpm = 200;

struct ReferenceResult {
  const char* problem;  // nullptr when `estimate` is valid
  TscEstimate estimate;
};

struct ReferenceChoice {
  bool found;            // false: no reference worked
  Reference reference;   // the one used
  TscEstimate estimate;  // its result, with the uncertainty raised to the disagreement when nothing agrees
  bool disagree;         // several references worked and no two of them agree
  uint32_t disagreement_ppm;  // the largest difference between the chosen reference and a working other one
};

// The difference between two estimates relative to their mean, in ppm, rounded down.
uint32_t difference_ppm(const TscEstimate& a, const TscEstimate& b);
bool agree(const TscEstimate& a, const TscEstimate& b);

// `results` indexed by Reference. The first working reference in preference order that agrees with another
// working one; a lone working reference; or, when several work and none agree, the first working one with
// `disagree` set and its uncertainty widened to cover the largest disagreement.
ReferenceChoice choose_reference(const ReferenceResult (&results)[kReferenceCount]);

const char* reference_name(Reference reference);

}  // namespace ett::lib
