// cpuid_frequency_test.cpp: the TSC's nominal rate from CPUID leaves 0x15/0x16 (kernel/lib/cpuid_frequency),
// on the figures real CPUs report.
#include "lib/cpuid_frequency.h"

#include <gtest/gtest.h>

#include <string>

namespace ett::lib {
namespace {

TEST(KernelCpuidFrequency, CrystalTimesRatio) {
  // A 24 MHz crystal and a 216/2 ratio: 2592 MHz.
  auto rate = cpuid_tsc_frequency({6, 0x8C, 2, 216, 24'000'000, 2600});
  ASSERT_TRUE(rate) << rate.error().message;
  EXPECT_EQ(rate->estimate.hz, 2'592'000'000u);
  EXPECT_EQ(rate->estimate.uncertainty_ppm, kCrystalUncertaintyPpm);
  EXPECT_EQ(std::string(rate->source), "CPUID 0x15 (crystal x TSC ratio)");
  // Ice Lake server style: 25 MHz crystal (enumerated), ratio 2:184 -> 2300 MHz.
  EXPECT_EQ(cpuid_tsc_frequency({6, 0x6A, 2, 184, 25'000'000, 2300})->estimate.hz, 2'300'000'000u);
  // A ratio that does not divide evenly is rounded down, not truncated early: 19.2 MHz x 117 / 1.
  EXPECT_EQ(cpuid_tsc_frequency({6, 0x7A, 1, 117, 19'200'000, 0})->estimate.hz, 2'246'400'000u);
}

TEST(KernelCpuidFrequency, SkylakeLeavesTheCrystalOut) {
  // A 4 GHz Skylake desktop part (model 0x5E) reports EAX 2, EBX 334, ECX 0; its crystal is 24 MHz: 4008 MHz.
  auto rate = cpuid_tsc_frequency({6, 0x5E, 2, 334, 0, 4000});
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->estimate.hz, 4'008'000'000u);
  EXPECT_EQ(std::string(rate->source), "CPUID 0x15 (TSC ratio x this model's crystal)");
  // Apollo Lake (Goldmont, 0x5C): 19.2 MHz.
  EXPECT_EQ(cpuid_tsc_frequency({6, 0x5C, 1, 57, 0, 0})->estimate.hz, 1'094'400'000u);
}

TEST(KernelCpuidFrequency, BaseFrequencyWhenTheRatioCannotBeUsed) {
  // An unlisted model with ECX 0: leaf 0x16's base MHz.
  auto rate = cpuid_tsc_frequency({6, 0xA7, 2, 200, 0, 2500});
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->estimate.hz, 2'500'000'000u);
  EXPECT_EQ(rate->estimate.uncertainty_ppm, kBaseMhzUncertaintyPpm);
  EXPECT_EQ(std::string(rate->source), "CPUID 0x16 (base frequency)");
  // A zero ratio (leaf 0x15 present but not enumerated) also falls back.
  EXPECT_EQ(cpuid_tsc_frequency({6, 0x9E, 0, 0, 0, 3700})->estimate.hz, 3'700'000'000u);
}

TEST(KernelCpuidFrequency, NothingReported) {
  // QEMU's TCG CPUs and anything before Skylake: neither leaf.
  auto rate = cpuid_tsc_frequency({6, 0x06, 0, 0, 0, 0});
  ASSERT_FALSE(rate);
  EXPECT_NE(std::string(rate.error().message).find("CPUID reports no TSC frequency"), std::string::npos);
  EXPECT_FALSE(cpuid_tsc_frequency({6, 0x5E, 2, 0, 24'000'000, 0}));  // a zero numerator
}

}  // namespace
}  // namespace ett::lib
