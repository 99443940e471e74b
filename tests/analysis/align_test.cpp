// align_test.cpp: clock offset and drift recovered from shared sync edges, and the merged timeline.
#include "analysis/align.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ett::host;

namespace {

// Sync edges on probe 3 every 1 ms; capture B's clock runs 20 ppm slow and started 5 µs later:
// t_ref = 5000 + 1.00002 * t_b.
constexpr double kOffset = 5000, kSlope = 1.00002;

std::vector<Capture> two_captures(int edges_b = 10) {
  Capture a, b;
  a.info.name = "A";
  b.info.name = "B";
  uint64_t seq_a = 0, seq_b = 0;
  for (int k = 0; k < 10; ++k) {
    const double t_ref = 1e6 * k + 7000;
    a.events.push_back({seq_a++, 3, static_cast<uint8_t>(k % 2), 0, 0, t_ref});
    if (k < edges_b)
      b.events.push_back({seq_b++, 3, static_cast<uint8_t>(k % 2), 0, 0, (t_ref - kOffset) / kSlope});
    if (k == 1) b.events.push_back({seq_b++, 1, 5, 0, 0, 1.5e6});
  }
  return {a, b};
}

}  // namespace

TEST(AnalysisAlign, RecoversOffsetAndDrift) {
  auto captures = two_captures();
  auto result = align_captures(captures, 3);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->fits.size(), 2u);
  EXPECT_DOUBLE_EQ(result->fits[0].slope, 1.0);
  EXPECT_DOUBLE_EQ(result->fits[0].offset_ns, 0.0);
  const ClockFit& fit = result->fits[1];
  EXPECT_EQ(fit.edges, 10u);
  EXPECT_NEAR(fit.offset_ns, kOffset, 1e-3);
  EXPECT_NEAR(fit.drift_ppm, 20, 1e-6);
  EXPECT_LT(fit.max_abs_residual_ns, 1e-3);
  EXPECT_EQ(fit.residuals_ns.size(), 10u);
  ASSERT_EQ(result->timeline.size(), 21u);
  // B's probe-1 event at 1.5 ms on its own clock is at 5000 + 1.00002 * 1.5e6 = 1505030 ns on the
  // reference's, between the reference's edges at 1007000 and 2007000.
  auto it = std::find_if(result->timeline.begin(), result->timeline.end(),
                         [](const MergedEvent& e) { return e.capture == 1 && e.event.probe == 1; });
  ASSERT_NE(it, result->timeline.end());
  EXPECT_NEAR(it->ref_time_ns, 1505030, 1e-3);
  const size_t index = static_cast<size_t>(it - result->timeline.begin());
  EXPECT_NEAR(result->timeline[index - 1].ref_time_ns, 1007000, 1e-3);
  EXPECT_NEAR(result->timeline[index + 1].ref_time_ns, 2007000, 1e-3);
  for (size_t i = 1; i < result->timeline.size(); ++i)
    EXPECT_LE(result->timeline[i - 1].ref_time_ns, result->timeline[i].ref_time_ns);
  EXPECT_EQ(result->merged_events, 21u);
}

TEST(AnalysisAlign, WithoutTheTimelineTheFitsAndTheCountAreTheSame) {
  auto captures = two_captures();
  auto kept = align_captures(captures, 3);
  auto counted = align_captures(captures, 3, false);
  ASSERT_TRUE(kept && counted);
  EXPECT_TRUE(counted->timeline.empty());
  EXPECT_EQ(counted->merged_events, kept->timeline.size());
  ASSERT_EQ(counted->fits.size(), kept->fits.size());
  for (size_t i = 0; i < kept->fits.size(); ++i) {
    EXPECT_EQ(counted->fits[i].offset_ns, kept->fits[i].offset_ns);
    EXPECT_EQ(counted->fits[i].slope, kept->fits[i].slope);
    EXPECT_EQ(counted->fits[i].residuals_ns, kept->fits[i].residuals_ns);
  }
}

TEST(AnalysisAlign, ReportsResidualsOfAJitteredEdge) {
  auto captures = two_captures();
  captures[1].events[4].time_ns += 100;  // one edge of B seen 100 ns late
  auto result = align_captures(captures, 3);
  ASSERT_TRUE(result);
  EXPECT_GT(result->fits[1].max_abs_residual_ns, 50);
  EXPECT_GT(result->fits[1].rms_residual_ns, 10);
}

TEST(AnalysisAlign, RefusesMismatchedEdgesOrASingleCapture) {
  auto captures = two_captures(9);
  auto result = align_captures(captures, 3);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("B has 9 sync edges on probe 3 but the reference A has 10"),
            std::string::npos);
  EXPECT_FALSE(align_captures(std::span<const Capture>(captures.data(), 1), 3));
  EXPECT_FALSE(align_captures(two_captures(), 2));  // no edges on probe 2
}
