// align_test.cpp: clock offset and drift recovered from shared sync edges, and the merged timeline.
#include "analysis/align.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

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
  const std::vector<MergedRef> timeline = result->timeline.refs();
  ASSERT_EQ(timeline.size(), 21u);
  auto reference_ns = [&](const MergedRef& merged) {
    return result->clock(merged.capture).reference_ns(captures[merged.capture].events[merged.event].time_ns);
  };
  // B's probe-1 event at 1.5 ms on its own clock is at 5000 + 1.00002 * 1.5e6 = 1505030 ns on the
  // reference's, between the reference's edges at 1007000 and 2007000.
  auto it = std::find_if(timeline.begin(), timeline.end(), [&](const MergedRef& merged) {
    return merged.capture == 1 && captures[1].events[merged.event].probe == 1;
  });
  ASSERT_NE(it, timeline.end());
  EXPECT_NEAR(reference_ns(*it), 1505030, 1e-3);
  const size_t index = static_cast<size_t>(it - timeline.begin());
  EXPECT_NEAR(reference_ns(timeline[index - 1]), 1007000, 1e-3);
  EXPECT_NEAR(reference_ns(timeline[index + 1]), 2007000, 1e-3);
  for (size_t i = 1; i < timeline.size(); ++i)
    EXPECT_LE(reference_ns(timeline[i - 1]), reference_ns(timeline[i]));
  EXPECT_EQ(result->merged_events, 21u);
}

TEST(AnalysisAlign, WithoutTheTimelineTheFitsAndTheCountAreTheSame) {
  auto captures = two_captures();
  auto kept = align_captures(captures, 3);
  auto counted = align_captures(captures, 3, false);
  ASSERT_TRUE(kept && counted);
  EXPECT_TRUE(counted->timeline.empty());
  EXPECT_EQ(counted->merged_events, kept->timeline.size());
  EXPECT_EQ(kept->timeline.refs().size(), kept->timeline.size());
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

// The merge gives what one stable sort of all the captures' events by reference time gives (capture 0's
// events first, each capture in its own order): with ties between and within captures, and a capture whose
// events are out of time order.
TEST(AnalysisAlign, TheMergeIsAStableSortByReferenceTime) {
  std::mt19937_64 random(11);
  for (int round = 0; round < 20; ++round) {
    std::vector<Capture> captures(2 + round % 3);
    std::vector<LinearClock> clocks;
    for (size_t k = 0; k < captures.size(); ++k) {
      // Slopes that keep whole times whole, so that times tie across captures too.
      clocks.push_back(
          {static_cast<double>(random() % 5) * 10, k == 0 ? 1.0 : 0.5 * static_cast<double>(1 + k)});
      double time = 0;
      // The last rounds long enough for the timeline's marks (every MergedTimeline::kStride events).
      const uint64_t count = round < 16 ? 200 + random() % 200 : 3000 + random() % 3000;
      for (uint64_t seq = 0; seq < count; ++seq) {
        time += static_cast<double>(random() % 3) * 10;  // repeats: ties within a capture
        const bool backwards = round % 4 == 3 && k == 1 && random() % 10 == 0;
        captures[k].events.push_back({seq, 1, 0, 0, 0, backwards ? time - 25 : time});
      }
    }
    auto timeline = MergedTimeline::make(captures, clocks);
    ASSERT_TRUE(timeline) << timeline.error().message;
    const std::vector<MergedRef> merged = timeline->refs();
    std::vector<MergedRef> sorted;
    for (size_t k = 0; k < captures.size(); ++k)
      for (size_t i = 0; i < captures[k].events.size(); ++i)
        sorted.push_back({static_cast<uint32_t>(k), static_cast<uint32_t>(i)});
    auto time = [&](const MergedRef& r) {
      return clocks[r.capture].reference_ns(captures[r.capture].events[r.event].time_ns);
    };
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const MergedRef& a, const MergedRef& b) { return time(a) < time(b); });
    ASSERT_EQ(merged.size(), sorted.size());
    for (size_t i = 0; i < sorted.size(); ++i) {
      ASSERT_EQ(merged[i].capture, sorted[i].capture) << "round " << round << ", place " << i;
      ASSERT_EQ(merged[i].event, sorted[i].event) << "round " << round << ", place " << i;
    }
    // Walked from anywhere (a mark, between marks, past the end), the same events.
    const size_t size = sorted.size();
    constexpr size_t kStride = MergedTimeline::kStride;
    for (const auto& [begin, end] : std::vector<std::pair<size_t, size_t>>{{0, size},
                                                                           {1, size / 2},
                                                                           {size / 3, size + 5},
                                                                           {size - 1, size},
                                                                           {size, size + 1},
                                                                           {7, 7},
                                                                           {kStride, 2 * kStride},
                                                                           {kStride - 1, kStride + 1},
                                                                           {2 * kStride + 17, size}}) {
      size_t at = begin;
      timeline->walk(begin, end, [&](const MergedRef& ref) {
        ASSERT_LT(at, size);
        EXPECT_EQ(ref.capture, sorted[at].capture) << at;
        EXPECT_EQ(ref.event, sorted[at].event) << at;
        ++at;
      });
      EXPECT_EQ(at, std::max(begin, std::min(end, size))) << begin << " " << end;
    }
  }
  EXPECT_FALSE(MergedTimeline::make(std::vector<Capture>(2), std::vector<LinearClock>(1)));
}

// Two captures whose times tie within and across them at every mark: walked from any mark, the timeline is
// the stable sort's (capture 0's events first on a tie), also when every event of both has the same time.
TEST(AnalysisAlign, TheTimelineKeepsTiesInCaptureOrderAtEveryMark) {
  constexpr size_t kStride = MergedTimeline::kStride;
  for (const bool all_equal : {false, true}) {
    std::vector<Capture> captures(2);
    for (size_t k = 0; k < 3 * kStride + 5; ++k) {
      captures[0].events.push_back({k, 1, 0, 0, 0, all_equal ? 0.0 : static_cast<double>(k / 7 * 10)});
      captures[1].events.push_back({k, 2, 0, 0, 0, all_equal ? 0.0 : static_cast<double>(k / 5 * 10)});
    }
    const std::vector<LinearClock> clocks(2);
    auto timeline = MergedTimeline::make(captures, clocks);
    ASSERT_TRUE(timeline);
    std::vector<MergedRef> sorted;
    for (uint32_t c = 0; c < 2; ++c)
      for (uint32_t i = 0; i < captures[c].events.size(); ++i) sorted.push_back({c, i});
    std::stable_sort(sorted.begin(), sorted.end(), [&](const MergedRef& a, const MergedRef& b) {
      return captures[a.capture].events[a.event].time_ns < captures[b.capture].events[b.event].time_ns;
    });
    for (size_t begin = 0; begin < sorted.size(); begin += kStride) {
      size_t at = begin;
      timeline->walk(begin, begin + kStride, [&](const MergedRef& ref) {
        ASSERT_EQ(ref.capture, sorted[at].capture) << all_equal << " " << at;
        ASSERT_EQ(ref.event, sorted[at].event) << all_equal << " " << at;
        ++at;
      });
      EXPECT_EQ(at, std::min(begin + kStride, sorted.size()));
    }
  }
}
