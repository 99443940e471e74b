// tsc_reference.cpp: rate and uncertainty from a bracketed measurement, and the choice of reference timer.
#include "lib/tsc_reference.h"

namespace ett::lib {

namespace {

struct U128 {
  uint64_t high;
  uint64_t low;
};

U128 multiply(uint64_t a, uint64_t b) {
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  return U128{p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32), (middle << 32) | (p00 & 0xFFFFFFFFu)};
}

constexpr uint64_t kMinTscHz = 1'000'000;

}  // namespace

uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c) {
  const U128 product = multiply(a, b);
  if (product.high == 0) return product.low / c;
  // Shift-subtract long division: runs a few times per boot, so 128 steps cost nothing that matters.
  uint64_t remainder = 0, quotient = 0;
  for (int bit = 127; bit >= 0; --bit) {
    const bool top = remainder >> 63;
    remainder = remainder << 1 | ((bit >= 64 ? product.high >> (bit - 64) : product.low >> bit) & 1);
    quotient <<= 1;
    if (top || remainder >= c) {
      remainder -= c;
      quotient |= 1;
    }
  }
  return quotient;
}

Result<TscEstimate> estimate_tsc(const Bracket& bracket, ReferenceRate rate) {
  if (bracket.counts_low == 0 || bracket.counts_high < bracket.counts_low ||
      bracket.tsc_high < bracket.tsc_low || rate.numerator == 0 || rate.denominator == 0)
    return fail("the reference timer did not advance during the measurement");
  const uint64_t low = mul_div(bracket.tsc_low, rate.numerator, bracket.counts_high * rate.denominator);
  const uint64_t high = mul_div(bracket.tsc_high, rate.numerator, bracket.counts_low * rate.denominator);
  const uint64_t hz = low + (high - low) / 2;
  if (hz < kMinTscHz) return fail("the reference timer gave a TSC rate below 1 MHz (a broken timer)");
  const uint64_t ppm = ((high - low) * 1'000'000 + 2 * hz - 1) / (2 * hz);
  return TscEstimate{hz, static_cast<uint32_t>(ppm > 0xFFFFFFFFu ? 0xFFFFFFFFu : ppm)};
}

Bracket counter_bracket(const CounterRead& start, const CounterRead& end, uint32_t bits, uint32_t step) {
  const uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  const uint64_t counts = (end.counter - start.counter) & mask;
  if (step == 0) step = 1;
  return Bracket{end.tsc_before - start.tsc_after, end.tsc_after - start.tsc_before,
                 counts > step ? counts - step : 0, counts + step};
}

uint32_t difference_ppm(const TscEstimate& a, const TscEstimate& b) {
  const uint64_t difference = a.hz > b.hz ? a.hz - b.hz : b.hz - a.hz;
  const uint64_t mean = a.hz / 2 + b.hz / 2;
  if (mean == 0) return 0xFFFFFFFFu;
  const uint64_t ppm = mul_div(difference, 1'000'000, mean);
  return static_cast<uint32_t>(ppm > 0xFFFFFFFFu ? 0xFFFFFFFFu : ppm);
}

bool agree(const TscEstimate& a, const TscEstimate& b) {
  return uint64_t{difference_ppm(a, b)} <=
         uint64_t{a.uncertainty_ppm} + b.uncertainty_ppm + kAgreementSlackPpm;
}

ReferenceChoice choose_reference(const ReferenceResult (&results)[kReferenceCount]) {
  ReferenceChoice choice{};
  int first_working = -1;
  int agreeing = -1;
  for (uint32_t i = 0; i < kReferenceCount && agreeing < 0; ++i) {
    if (results[i].problem) continue;
    if (first_working < 0) first_working = static_cast<int>(i);
    for (uint32_t j = 0; j < kReferenceCount && agreeing < 0; ++j)
      if (j != i && !results[j].problem && agree(results[i].estimate, results[j].estimate))
        agreeing = static_cast<int>(i);
  }
  if (first_working < 0) return choice;
  const int chosen = agreeing >= 0 ? agreeing : first_working;
  choice.found = true;
  choice.reference = static_cast<Reference>(chosen);
  choice.estimate = results[chosen].estimate;
  bool others = false;
  for (uint32_t j = 0; j < kReferenceCount; ++j) {
    if (j == static_cast<uint32_t>(chosen) || results[j].problem) continue;
    others = true;
    const uint32_t ppm = difference_ppm(choice.estimate, results[j].estimate);
    if (ppm > choice.disagreement_ppm) choice.disagreement_ppm = ppm;
  }
  // Several references and no two agree: the chosen one is no more trustworthy than their spread.
  choice.disagree = others && agreeing < 0;
  if (choice.disagree && choice.disagreement_ppm > choice.estimate.uncertainty_ppm)
    choice.estimate.uncertainty_ppm = choice.disagreement_ppm;
  return choice;
}

const char* reference_name(Reference reference) {
  switch (reference) {
    case Reference::Hpet:
      return "HPET";
    case Reference::PmTimer:
      return "ACPI PM timer";
    case Reference::Pit:
      return "PIT";
  }
  return "?";
}

}  // namespace ett::lib
