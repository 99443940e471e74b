// survey_math_test.cpp: the survey's arithmetic (kernel/survey/survey_math.h): histogram bins, ppm between
// two rates, read statistics and the block's seal.
#include "survey/survey_math.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace ett::survey {
namespace {

TEST(SurveyMath, GapBinIsFloorLog2) {
  EXPECT_EQ(gap_bin(0), 0u);
  EXPECT_EQ(gap_bin(1), 0u);
  EXPECT_EQ(gap_bin(2), 1u);
  EXPECT_EQ(gap_bin(3), 1u);
  EXPECT_EQ(gap_bin(4), 2u);
  EXPECT_EQ(gap_bin(3000), 11u);  // 2048 <= 3000 < 4096
  EXPECT_EQ(gap_bin(4095), 11u);
  EXPECT_EQ(gap_bin(4096), 12u);
  EXPECT_EQ(gap_bin(0xFFFFFFFFull), 31u);
}

TEST(SurveyMath, GapBinSaturatesInTheLastBin) {
  EXPECT_EQ(gap_bin(1ull << 40), format::kSurveyGapBins - 1);
  EXPECT_EQ(gap_bin(UINT64_MAX), format::kSurveyGapBins - 1);
}

TEST(SurveyMath, PpmSignedAgainstTheChosenRate) {
  EXPECT_EQ(ppm_vs(1'000'001'000, 1'000'000'000), 1);
  EXPECT_EQ(ppm_vs(999'999'000, 1'000'000'000), -1);
  EXPECT_EQ(ppm_vs(3'000'000'000, 3'000'000'000), 0);
  EXPECT_EQ(ppm_vs(3'000'300'000, 3'000'000'000), 100);
  EXPECT_EQ(ppm_vs(2'999'700'000, 3'000'000'000), -100);
  EXPECT_EQ(ppm_vs(1'500'000, 1'000'000), 500'000);
}

TEST(SurveyMath, PpmOfAnUnknownRateIsZeroAndLargeOnesSaturate) {
  EXPECT_EQ(ppm_vs(0, 1'000'000'000), 0);
  EXPECT_EQ(ppm_vs(1'000'000'000, 0), 0);
  EXPECT_EQ(ppm_vs(UINT64_MAX, 1), INT32_MAX);
  EXPECT_EQ(ppm_vs(1, 3'000'000'000), -999'999);
}

TEST(SurveyMath, ReadStatsMinMedianMax) {
  std::vector<uint32_t> samples = {50, 10, 40, 20, 30};
  const ReadStats stats = read_stats(samples.data(), static_cast<uint32_t>(samples.size()));
  EXPECT_EQ(stats.min, 10u);
  EXPECT_EQ(stats.median, 30u);
  EXPECT_EQ(stats.max, 50u);
  std::vector<uint32_t> even = {4, 1, 3, 2};
  EXPECT_EQ(read_stats(even.data(), 4).median, 2u);  // the lower middle
  EXPECT_EQ(read_stats(nullptr, 0).max, 0u);
}

TEST(SurveyMath, ReadStatsOfManySamplesWithOutliers) {
  std::vector<uint32_t> samples(4096, 25);
  samples[17] = 9000;  // one preempted read
  samples[4000] = 7;
  const ReadStats stats = read_stats(samples.data(), 4096);
  EXPECT_EQ(stats.min, 7u);
  EXPECT_EQ(stats.median, 25u);
  EXPECT_EQ(stats.max, 9000u);
}

TEST(SurveyMath, SealSetsMagicVersionAndACrcThatCatchesAnyChange) {
  format::SurveyBlock block{};
  block.probe_count = 3;
  block.gap_histogram[5] = 12;
  seal(block);
  EXPECT_EQ(std::memcmp(block.magic, format::kSurveyMagic, 8), 0);
  EXPECT_EQ(block.version, format::kSurveyVersion);
  EXPECT_TRUE(sealed(block));
  block.disks[7].sectors ^= 1;
  EXPECT_FALSE(sealed(block));
}

TEST(SurveyMath, CopyDetailTruncatesAndTerminates) {
  char out[8];
  copy_detail(out, sizeof(out), "a long refusal message");
  EXPECT_STREQ(out, "a long ");
  copy_detail(out, sizeof(out), nullptr);
  EXPECT_STREQ(out, "");
}

}  // namespace
}  // namespace ett::survey
