// histogram_test.cpp: trit mask/match parsing, duration units, and counts by code, probe and time.
#include "analysis/histogram.h"

#include <gtest/gtest.h>

using namespace ett::host;

TEST(AnalysisHistogram, ParsesTritsWrittenD7ToD0) {
  auto pattern = parse_trits("1X0XXXXX");
  ASSERT_TRUE(pattern) << pattern.error().message;
  EXPECT_EQ(pattern->mask, 0xA0);
  EXPECT_EQ(pattern->match, 0x80);
  EXPECT_TRUE(pattern->matches(0x80));
  EXPECT_TRUE(pattern->matches(0xDF));   // 1101 1111: D7 = 1, D5 = 0
  EXPECT_FALSE(pattern->matches(0xA0));  // D5 = 1
  EXPECT_FALSE(pattern->matches(0x00));  // D7 = 0
  EXPECT_EQ(trits_text(*pattern), "1X0XXXXX");
  auto low = parse_trits("xxxxxxx1");
  ASSERT_TRUE(low);
  EXPECT_EQ(low->mask, 0x01);
  EXPECT_EQ(low->match, 0x01);
  for (const char* bad : {"1X0XXXX", "1X0XXXXXX", "1X0XXXX2", ""}) EXPECT_FALSE(parse_trits(bad)) << bad;
}

TEST(AnalysisHistogram, ParsesDurationsAndKeys) {
  EXPECT_DOUBLE_EQ(*parse_duration_ns("250"), 250);
  EXPECT_DOUBLE_EQ(*parse_duration_ns("250ns"), 250);
  EXPECT_DOUBLE_EQ(*parse_duration_ns("10us"), 1e4);
  EXPECT_DOUBLE_EQ(*parse_duration_ns("1.5ms"), 1.5e6);
  EXPECT_DOUBLE_EQ(*parse_duration_ns("2s"), 2e9);
  for (const char* bad : {"0", "-1ms", "5m", "ms", "", "1e400"}) EXPECT_FALSE(parse_duration_ns(bad)) << bad;
  EXPECT_EQ(parse_histogram_by("code")->key, HistogramKey::Code);
  EXPECT_EQ(parse_histogram_by("probe")->key, HistogramKey::Probe);
  auto time = parse_histogram_by("time:1us");
  ASSERT_TRUE(time);
  EXPECT_EQ(time->key, HistogramKey::Time);
  EXPECT_DOUBLE_EQ(time->bucket_ns, 1000);
  EXPECT_FALSE(parse_histogram_by("lines"));
  EXPECT_FALSE(parse_histogram_by("time:"));
}

namespace {

// lines = D7..D0 after the change under the 2x4 layout (probe 1 = D0-D3, probe 2 = D4-D7).
const std::vector<AnalysisEvent> kEvents = {
    {0, 1, 1, 0x01, 0, 100},  {1, 2, 8, 0x81, 0, 900},  {2, 1, 2, 0x82, 0, 1200},
    {3, 1, 1, 0x81, 0, 3500}, {4, 2, 2, 0x21, 0, 3600}, {5, 1, 2, 0x22, 0, 3700},
};

}  // namespace

TEST(AnalysisHistogram, CountsByCodeAndProbe) {
  const HistogramResult by_code = histogram(kEvents, *parse_histogram_by("code"), std::nullopt);
  EXPECT_EQ(by_code.total, 6u);
  EXPECT_EQ(by_code.matched, 6u);
  ASSERT_EQ(by_code.rows.size(), 4u);
  EXPECT_EQ(by_code.rows[0].label, "1:1");
  EXPECT_EQ(by_code.rows[0].count, 2u);
  EXPECT_EQ(by_code.rows[1].label, "1:2");
  EXPECT_EQ(by_code.rows[1].count, 2u);
  EXPECT_EQ(by_code.rows[2].label, "2:2");
  EXPECT_EQ(by_code.rows[3].label, "2:8");
  const HistogramResult by_probe = histogram(kEvents, *parse_histogram_by("probe"), std::nullopt);
  ASSERT_EQ(by_probe.rows.size(), 2u);
  EXPECT_EQ(by_probe.rows[0].count, 4u);
  EXPECT_EQ(by_probe.rows[1].count, 2u);
}

TEST(AnalysisHistogram, MaskMatchFilterAndTimeBucketsIncludingEmptyOnes) {
  // D7 = 1: the events while probe 2 shows code 8.
  const HistogramResult filtered = histogram(kEvents, *parse_histogram_by("probe"), *parse_trits("1XXXXXXX"));
  EXPECT_EQ(filtered.total, 6u);
  EXPECT_EQ(filtered.matched, 3u);
  ASSERT_EQ(filtered.rows.size(), 2u);
  EXPECT_EQ(filtered.rows[0].count, 2u);  // seq 2, 3
  EXPECT_EQ(filtered.rows[1].count, 1u);  // seq 1
  const HistogramResult by_time = histogram(kEvents, *parse_histogram_by("time:1us"), std::nullopt);
  ASSERT_EQ(by_time.rows.size(), 4u);  // [0,1us) [1,2) [2,3) [3,4)
  EXPECT_EQ(by_time.rows[0].count, 2u);
  EXPECT_EQ(by_time.rows[1].count, 1u);
  EXPECT_EQ(by_time.rows[2].count, 0u);
  EXPECT_EQ(by_time.rows[3].count, 3u);
  EXPECT_DOUBLE_EQ(by_time.rows[3].start_ns, 3000);
}

// Counters of parts, counted in any order and merged, give what one counter of all the events gives.
TEST(AnalysisHistogram, MergedPartCountersCountWhatOneCounterCounts) {
  for (const char* by : {"code", "probe", "time:1us"}) {
    const HistogramSpec spec = *parse_histogram_by(by);
    const std::optional<TritPattern> filters[] = {std::nullopt, *parse_trits("1XXXXXXX")};
    for (const std::optional<TritPattern>& filter : filters) {
      const HistogramResult whole = histogram(kEvents, spec, filter);
      HistogramCounter first(spec, filter), second(spec, filter);
      second.add(std::span(kEvents).subspan(4));
      first.add(std::span(kEvents).first(4));
      first.merge(second);
      const HistogramResult merged = first.result();
      EXPECT_EQ(merged.total, whole.total) << by;
      EXPECT_EQ(merged.matched, whole.matched) << by;
      ASSERT_EQ(merged.rows.size(), whole.rows.size()) << by;
      for (size_t i = 0; i < whole.rows.size(); ++i) {
        EXPECT_EQ(merged.rows[i].label, whole.rows[i].label) << by << " " << i;
        EXPECT_EQ(merged.rows[i].count, whole.rows[i].count) << by << " " << i;
      }
    }
  }
}
