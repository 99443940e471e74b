// tsc_reference_test.cpp: the TSC calibration arithmetic (rate and uncertainty from a bracket, counter
// wrap-around, 128-bit mul_div) and the choice among PIT, PM timer and HPET (kernel/lib/tsc_reference).
#include "lib/tsc_reference.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lib/tsc_warning.h"

namespace ett::lib {
namespace {

constexpr ReferenceRate kPit{1'193'182, 1};
constexpr ReferenceRate kPmTimer{3'579'545, 1};
constexpr ReferenceRate hpet(uint64_t period_fs) {
  return {1'000'000'000'000'000ull, period_fs};
}

TEST(KernelTscReference, MulDivMatchesA128BitReference) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t a = random() >> (random() % 64), b = random() >> (random() % 64);
    uint64_t c = random() >> (random() % 64);
    if (c == 0) c = 1;
    const unsigned __int128 exact = static_cast<unsigned __int128>(a) * b / c;
    if (exact >> 64) continue;  // the quotient must fit: not a case the kernel has
    ASSERT_EQ(mul_div(a, b, c), static_cast<uint64_t>(exact)) << a << " * " << b << " / " << c;
  }
  // The HPET case: 50 ms of a 2.25 GHz TSC times 10^15 fs overflows 64 bits.
  EXPECT_EQ(mul_div(112'500'000, 1'000'000'000'000'000ull, 5'000'000ull * 10'000'000), 2'250'000'000u);
  EXPECT_EQ(mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

TEST(KernelTscReference, AnExactBracketGivesTheRateWithNoUncertainty) {
  // 100 MHz HPET (QEMU's, period 10 ns): 5,000,000 counts in exactly 112,500,000 ticks.
  auto estimate = estimate_tsc({112'500'000, 112'500'000, 5'000'000, 5'000'000}, hpet(10'000'000));
  ASSERT_TRUE(estimate) << estimate.error().message;
  EXPECT_EQ(estimate->hz, 2'250'000'000u);
  EXPECT_EQ(estimate->uncertainty_ppm, 0u);
}

TEST(KernelTscReference, TheUncertaintyIsHalfTheRangeOfRatesTheBracketAllows) {
  // PM timer: the readings differ by 178,977 counts, so 178,976 to 178,978 elapsed.
  auto pm = estimate_tsc({112'500'000, 112'500'000, 178'976, 178'978}, kPmTimer);
  ASSERT_TRUE(pm);
  EXPECT_EQ(pm->hz, 2'250'003'142u);   // (2249990571 + 2250015714) / 2, each bound rounded down
  EXPECT_EQ(pm->uncertainty_ppm, 6u);  // 25143 / 2 / 2.25e9 = 5.59 ppm, rounded up

  // PIT: OUT2 rose 59,659 to 59,660 clocks after the count was written, 112,499,000 to 112,501,000 ticks.
  auto pit = estimate_tsc({112'499'000, 112'501'000, 59'659, 59'660}, kPit);
  ASSERT_TRUE(pit);
  EXPECT_EQ(pit->hz, 2'249'984'914u);
  EXPECT_EQ(pit->uncertainty_ppm, 18u);
}

TEST(KernelTscReference, AWiderBracketGivesALargerUncertainty) {
  auto tight = estimate_tsc({112'499'900, 112'500'100, 178'976, 178'978}, kPmTimer);
  auto wide = estimate_tsc({112'490'000, 112'510'000, 178'976, 178'978}, kPmTimer);
  ASSERT_TRUE(tight);
  ASSERT_TRUE(wide);
  EXPECT_LT(tight->uncertainty_ppm, wide->uncertainty_ppm);
  EXPECT_EQ(wide->uncertainty_ppm, 95u);  // 89 ppm from the TSC bracket + 5.6 ppm from the counts
}

TEST(KernelTscReference, BrokenMeasurementsAreErrors) {
  EXPECT_FALSE(estimate_tsc({1000, 2000, 0, 1}, kPmTimer));            // the counter did not move
  EXPECT_FALSE(estimate_tsc({2000, 1000, 10, 11}, kPmTimer));          // inverted TSC bracket
  EXPECT_FALSE(estimate_tsc({1000, 1000, 11, 10}, kPmTimer));          // inverted counts
  auto slow = estimate_tsc({1000, 1000, 178'977, 178'977}, kPmTimer);  // 20 kHz: a timer running wild
  ASSERT_FALSE(slow);
  EXPECT_STREQ(slow.error().message, "the reference timer gave a TSC rate below 1 MHz (a broken timer)");
  EXPECT_FALSE(estimate_tsc({1000, 1000, 10, 10}, {0, 1}));
}

TEST(KernelTscReference, CounterBracketHandlesWrapAround) {
  // A 24-bit PM timer wraps from 0xFFFFF0 to 0x10: 0x20 counts, so 0x1F to 0x21 elapsed.
  const Bracket b = counter_bracket({1000, 0xFFFFF0, 1100}, {5000, 0x10, 5150}, 24);
  EXPECT_EQ(b.counts_low, 0x1Fu);
  EXPECT_EQ(b.counts_high, 0x21u);
  EXPECT_EQ(b.tsc_low, 5000u - 1100u);  // the end's first TSC read minus the start's last
  EXPECT_EQ(b.tsc_high, 5150u - 1000u);
  // The high byte of a 32-bit value read from a 24-bit timer's port is ignored.
  EXPECT_EQ(counter_bracket({0, 0xAB000005, 0}, {1, 0x00000009, 1}, 24).counts_high, 5u);
  // 32-bit counters (the HPET's low half, a TMR_VAL_EXT PM timer) wrap at 2^32.
  EXPECT_EQ(counter_bracket({0, 0xFFFFFFFE, 0}, {1, 3, 1}, 32).counts_high, 6u);
}

TEST(KernelTscReference, CounterBracketWidensByTheCounterStep) {
  // A counter moving 4 counts at a time (Bochs's PM timer: a microsecond clock) is 4 counts uncertain.
  const Bracket b = counter_bracket({1000, 100, 1010}, {9000, 1100, 9010}, 24, 4);
  EXPECT_EQ(b.counts_low, 996u);
  EXPECT_EQ(b.counts_high, 1004u);
  EXPECT_EQ(counter_bracket({0, 100, 0}, {1, 102, 1}, 24, 4).counts_low, 0u);     // never below zero
  EXPECT_EQ(counter_bracket({0, 100, 0}, {1, 200, 1}, 24, 0).counts_high, 101u);  // 0 is taken as 1
}

ReferenceResult ok(uint64_t hz, uint32_t ppm) {
  return {nullptr, {hz, ppm}};
}
ReferenceResult broken(const char* why) {
  return {why, {}};
}

TEST(KernelTscReference, TheHpetIsPreferredWhenTheReferencesAgree) {
  const ReferenceResult results[kReferenceCount] = {ok(2'250'000'100, 1), ok(2'250'000'900, 9),
                                                    ok(2'250'030'000, 20)};
  const ReferenceChoice choice = choose_reference(results);
  ASSERT_TRUE(choice.found);
  EXPECT_EQ(choice.reference, Reference::Hpet);
  EXPECT_EQ(choice.estimate.hz, 2'250'000'100u);
  EXPECT_EQ(choice.estimate.uncertainty_ppm, 1u);
  EXPECT_FALSE(choice.disagree);
  EXPECT_EQ(choice.disagreement_ppm, 13u);  // the PIT, 29,900 Hz away
}

TEST(KernelTscReference, AMissingTimerFallsBackInOrder) {
  const ReferenceResult no_hpet[kReferenceCount] = {broken("no HPET"), ok(2'250'000'000, 9),
                                                    ok(2'250'000'000, 20)};
  EXPECT_EQ(choose_reference(no_hpet).reference, Reference::PmTimer);
  const ReferenceResult pit_only[kReferenceCount] = {broken("no HPET"), broken("no FADT"),
                                                     ok(2'250'000'000, 20)};
  const ReferenceChoice lone = choose_reference(pit_only);
  ASSERT_TRUE(lone.found);
  EXPECT_EQ(lone.reference, Reference::Pit);
  EXPECT_FALSE(lone.disagree);
  EXPECT_EQ(lone.estimate.uncertainty_ppm, 20u);
  const ReferenceResult none[kReferenceCount] = {broken("a"), broken("b"), broken("c")};
  EXPECT_FALSE(choose_reference(none).found);
}

TEST(KernelTscReference, AReferenceThatDisagreesWithTheOthersIsPassedOver) {
  // An HPET whose period the firmware misreports by 1 %: the PM timer and the PIT agree with each other.
  const ReferenceResult results[kReferenceCount] = {ok(2'272'500'000, 1), ok(2'250'000'000, 9),
                                                    ok(2'250'010'000, 20)};
  const ReferenceChoice choice = choose_reference(results);
  EXPECT_EQ(choice.reference, Reference::PmTimer);
  EXPECT_FALSE(choice.disagree);
  EXPECT_GE(choice.disagreement_ppm, 9900u);
  EXPECT_EQ(choice.estimate.uncertainty_ppm, 9u);
}

TEST(KernelTscReference, WhenNothingAgreesTheUncertaintyCoversTheSpread) {
  const ReferenceResult results[kReferenceCount] = {ok(2'272'500'000, 1), broken("no FADT"),
                                                    ok(2'250'000'000, 20)};
  const ReferenceChoice choice = choose_reference(results);
  EXPECT_EQ(choice.reference, Reference::Hpet);
  EXPECT_TRUE(choice.disagree);
  EXPECT_EQ(choice.disagreement_ppm, difference_ppm(results[0].estimate, results[2].estimate));
  EXPECT_EQ(choice.estimate.uncertainty_ppm, choice.disagreement_ppm);
  EXPECT_GT(choice.estimate.uncertainty_ppm, 9900u);
}

TEST(KernelTscReference, AgreementAllowsBothUncertaintiesPlusTheCrystalSlack) {
  const TscEstimate a{1'000'000'000, 10};
  // 10 + 20 + kAgreementSlackPpm = 230 ppm apart, in Hz around the mean: 230,000 Hz at 1 GHz.
  EXPECT_TRUE(agree(a, {1'000'230'000, 20}));
  EXPECT_FALSE(agree(a, {1'000'232'000, 20}));
  EXPECT_EQ(difference_ppm(a, {1'000'100'000, 0}), 99u);  // 100,000 / 1,000,050,000, rounded down
  EXPECT_EQ(difference_ppm(a, a), 0u);
}

// The CPUID flag decides the warning: under QEMU 7.2 TCG no CPU model has invtsc ("TCG doesn't support
// requested feature"), so only the absent side can be booted; this covers the present side too.
TEST(KernelTscWarning, OnlyANonInvariantTscIsWarnedAbout) {
  EXPECT_EQ(tsc_warning_lines(true), nullptr);
  EXPECT_EQ(tsc_screen_warning(true), nullptr);
  EXPECT_EQ(tsc_title_warning(true), nullptr);
  const char* const* lines = tsc_warning_lines(false);
  ASSERT_NE(lines, nullptr);
  std::string text;
  for (; *lines; ++lines) {
    EXPECT_LE(std::string(*lines).size(), 80u) << *lines;  // one screen row each
    text += std::string(*lines) + "\n";
  }
  EXPECT_NE(text.find("WARNING: THE TSC IS NOT INVARIANT"), std::string::npos) << text;
  EXPECT_NE(std::string(tsc_screen_warning(false)).find("NOT INVARIANT"), std::string::npos);
  EXPECT_LE(std::string(tsc_screen_warning(false)).size(), 80u);
  EXPECT_NE(std::string(tsc_title_warning(false)).find("NOT INVARIANT"), std::string::npos);
}

}  // namespace
}  // namespace ett::lib
