// stats_test.cpp: summary statistics, the loop-step precision table (the ETT paper's own numbers) and
// inter-arrival analysis, against hand-computed values.
#include "analysis/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/precision.h"

using namespace ett::host;

TEST(AnalysisStats, SummaryMatchesHandComputedValues) {
  const std::vector<double> values = {4, 1, 10, 3, 2};
  const Summary s = summarize(values);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  // Squared deviations 0 + 9 + 36 + 1 + 4 = 50; sample variance 50 / 4.
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p50, 3);   // rank ceil(2.5) = 3
  EXPECT_DOUBLE_EQ(s.p99, 10);  // rank ceil(4.95) = 5
  EXPECT_DOUBLE_EQ(s.max, 10);
}

TEST(AnalysisStats, EmptyAndSingleValue) {
  EXPECT_EQ(summarize(std::vector<double>{}).count, 0u);
  const Summary one = summarize(std::vector<double>{7});
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(one.p99, 7);
}

TEST(AnalysisStats, NearestRankDoesNotRoundUpThroughBinaryFractions) {
  std::vector<double> sorted;
  for (int i = 1; i <= 1000; ++i) sorted.push_back(i);
  EXPECT_DOUBLE_EQ(nearest_rank(sorted, 0.955), 955);
  EXPECT_DOUBLE_EQ(nearest_rank(sorted, 0.997), 997);
  EXPECT_DOUBLE_EQ(nearest_rank(sorted, 1.0), 1000);
  EXPECT_DOUBLE_EQ(nearest_rank(sorted, 0.0), 1);
}

namespace {

// A mode=calibrate capture at 500 MHz (epsilon = 2 ns, as the paper's Pentium III) whose loop steps are 955
// of 1522 ns, 42 of 1800 ns and 3 of 2080 ns, interleaved.
Capture paper_calibration() {
  Capture capture;
  capture.info.mode = "calibrate";
  capture.info.tsc_hz = 500'000'000;
  capture.info.capture_start_tsc = 1'000'000;
  capture.info.probe_count = 2;
  // 1001 records, 1000 steps between them; the gap from capture_start_tsc to the first record is no loop
  // step.
  uint64_t tsc = capture.info.capture_start_tsc + 5000;
  capture.events.push_back({0, 0, 0, 0, tsc, 0});
  for (int i = 0; i < 1000; ++i) {
    const uint64_t ticks = i % 333 == 7 ? 1040 : i % 23 == 5 && i < 42 * 23 ? 900 : 761;
    tsc += ticks;
    capture.events.push_back({static_cast<uint64_t>(i + 1), 0, 0, 0, tsc, 0});
  }
  return capture;
}

}  // namespace

TEST(AnalysisPrecision, ReproducesThePapersTable) {
  const Capture capture = paper_calibration();
  const auto steps = loop_steps_ns(capture);
  ASSERT_EQ(steps.size(), 1000u);
  ASSERT_EQ(std::count(steps.begin(), steps.end(), 2080.0), 3);
  ASSERT_EQ(std::count(steps.begin(), steps.end(), 1800.0), 42);
  auto result = analyze_precision(capture);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->steps, 1000u);
  EXPECT_DOUBLE_EQ(result->epsilon_ns, 2.0);
  ASSERT_EQ(result->levels.size(), 3u);
  EXPECT_DOUBLE_EQ(result->levels[0].tau_ns, 1522);
  EXPECT_DOUBLE_EQ(result->levels[0].pi_ns, 1524);
  EXPECT_EQ(result->levels[0].steps_within, 955u);
  EXPECT_DOUBLE_EQ(result->levels[1].tau_ns, 1800);
  EXPECT_DOUBLE_EQ(result->levels[1].pi_ns, 1802);
  EXPECT_EQ(result->levels[1].steps_within, 997u);
  EXPECT_DOUBLE_EQ(result->levels[2].tau_ns, 2080);
  EXPECT_DOUBLE_EQ(result->levels[2].pi_ns, 2082);
  EXPECT_DOUBLE_EQ(result->levels[2].min_interarrival_ns, 2080);
  uint64_t binned = 0;
  for (const HistogramBin& bin : result->histogram) binned += bin.count;
  EXPECT_EQ(binned, 1000u);
  EXPECT_EQ(result->histogram.front().count, 955u);
  EXPECT_EQ(result->histogram.back().count, 3u);
  EXPECT_DOUBLE_EQ(result->histogram.front().lo_ns, 1522);
  EXPECT_DOUBLE_EQ(result->histogram.back().hi_ns, 2080);
  // Equal bins from the shortest step to tau(99.7 %), then one tail bin for the 3 longer steps.
  EXPECT_TRUE(result->histogram.back().tail);
  EXPECT_DOUBLE_EQ(result->histogram.back().lo_ns, 1800);
  EXPECT_EQ(result->histogram.size(), 41u);
  EXPECT_DOUBLE_EQ(result->histogram[39].hi_ns, 1800);
  EXPECT_EQ(result->histogram[39].count, 42u);
}

TEST(AnalysisPrecision, OneHugeStepDoesNotSquashTheHistogram) {
  // 999 steps of 100 or 110 ns and one emulator stall of 10 ms: the typical steps keep bins of their own.
  std::vector<double> steps(999, 100.0);
  for (size_t i = 0; i < steps.size(); i += 2) steps[i] = 110.0;
  steps.push_back(10e6);
  auto result = precision_from_steps(steps, 1'000'000'000, 2, PrecisionOptions{});
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_GE(result->histogram.size(), 2u);
  EXPECT_TRUE(result->histogram.back().tail);
  EXPECT_EQ(result->histogram.back().count, 1u);
  EXPECT_DOUBLE_EQ(result->histogram.back().hi_ns, 10e6);
  EXPECT_EQ(result->histogram.front().count, 499u);  // the 100 ns steps
  EXPECT_LE(result->histogram[result->histogram.size() - 2].hi_ns, 110.0);
}

TEST(AnalysisPrecision, RefusesACaptureThatIsNotACalibration) {
  Capture capture = paper_calibration();
  capture.info.mode = "capture";
  capture.info.name = "trace 4";
  auto result = analyze_precision(capture);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("trace 4 was captured with mode=capture"), std::string::npos);
  capture.info.mode = "calibrate";
  capture.info.tsc_hz = 0;
  EXPECT_FALSE(analyze_precision(capture));
  capture.info.tsc_hz = 1000;
  capture.events.clear();
  EXPECT_FALSE(analyze_precision(capture));
}

TEST(AnalysisIntervals, GapsPerProbeAndEventsCloserThanTau) {
  const std::vector<AnalysisEvent> events = {
      {0, 1, 1, 0, 0, 0},    {1, 2, 1, 0, 0, 200},  {2, 2, 2, 0, 0, 300},
      {3, 1, 2, 0, 0, 1000}, {4, 1, 3, 0, 0, 1500}, {5, 1, 4, 0, 0, 4000},
  };
  const IntervalsResult result = analyze_intervals(events, 600);
  ASSERT_EQ(result.probes.size(), 2u);
  const ProbeIntervals& p1 = result.probes[0];
  EXPECT_EQ(p1.probe, 1);
  EXPECT_EQ(p1.events, 4u);
  EXPECT_EQ(p1.gaps.count, 3u);  // 1000, 500, 2500
  EXPECT_DOUBLE_EQ(p1.gaps.mean, 4000.0 / 3);
  EXPECT_DOUBLE_EQ(p1.gaps.min, 500);
  EXPECT_DOUBLE_EQ(p1.gaps.max, 2500);
  ASSERT_EQ(p1.close.size(), 1u);
  EXPECT_EQ(p1.close[0].previous_seq, 3u);
  EXPECT_EQ(p1.close[0].seq, 4u);
  EXPECT_DOUBLE_EQ(p1.close[0].gap_ns, 500);
  const ProbeIntervals& p2 = result.probes[1];
  ASSERT_EQ(p2.close.size(), 1u);
  EXPECT_DOUBLE_EQ(p2.close[0].gap_ns, 100);
  EXPECT_TRUE(analyze_intervals(events, 0).probes[0].close.empty());
}

// Millions of gaps, read twice a batch at a time: the same summaries as the gaps held whole, to the bit.
TEST(AnalysisIntervals, BigProbesGiveTheSameSummariesAsTheGapsHeldWhole) {
  constexpr size_t kEvents = 3'000'000;
  std::mt19937_64 random(11);
  std::vector<AnalysisEvent> events(kEvents);
  std::vector<double> gaps[2];
  double last[2] = {-1, -1};
  double time = 0;
  for (size_t i = 0; i < kEvents; ++i) {
    time += static_cast<double>(1 + random() % 5000) * 0.37;  // not whole numbers: rounding in the gaps
    const auto probe = static_cast<uint8_t>(1 + random() % 2);
    events[i] = {i, probe, 1, 0, static_cast<uint64_t>(time), time};
    if (last[probe - 1] >= 0) gaps[probe - 1].push_back(time - last[probe - 1]);
    last[probe - 1] = time;
  }
  const Summary expected[2] = {summarize(std::span<const double>(gaps[0])),
                               summarize(std::span<const double>(gaps[1]))};
  IntervalsBuilder builder(0, {});
  for (size_t at = 0; at < kEvents; at += 4096)
    builder.add(std::span(events).subspan(at, std::min<size_t>(4096, kEvents - at)));
  builder.start_second();
  for (size_t at = 0; at < kEvents; at += 4096)
    builder.add_second(std::span(events).subspan(at, std::min<size_t>(4096, kEvents - at)));
  const IntervalsResult result = std::move(builder).finish(0);
  ASSERT_EQ(result.probes.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const Summary& got = result.probes[p].gaps;
    EXPECT_EQ(got.count, expected[p].count);
    EXPECT_EQ(got.mean, expected[p].mean);
    EXPECT_EQ(got.stddev, expected[p].stddev);
    EXPECT_EQ(got.min, expected[p].min);
    EXPECT_EQ(got.p50, expected[p].p50);
    EXPECT_EQ(got.p99, expected[p].p99);
    EXPECT_EQ(got.max, expected[p].max);
  }
}

// Loop steps added record by record are counted by value: each step length as often as it came.
TEST(AnalysisPrecision, LoopStepsCountEveryStep) {
  constexpr size_t kRecords = 2'500'000;
  std::mt19937_64 random(5);
  std::vector<uint64_t> tscs(kRecords);
  uint64_t tsc = 1000;
  for (uint64_t& t : tscs) t = tsc += 1 + random() % 900;
  tscs[7] = tscs[6];  // a corrupt record: no step
  LoopSteps steps(1'000'000'000);
  for (uint64_t t : tscs) steps.add(t);
  std::map<double, uint64_t> expected;
  for (size_t i = 1; i < kRecords; ++i)
    if (tscs[i] > tscs[i - 1]) ++expected[static_cast<double>(tscs[i] - tscs[i - 1])];
  ValueCounts taken = std::move(steps).take();
  EXPECT_EQ(taken.count(), kRecords - 2);
  const std::vector<ValueCount>& counts = taken.counts();
  ASSERT_EQ(counts.size(), expected.size());
  size_t i = 0;
  for (const auto& [value, count] : expected) {
    ASSERT_EQ(counts[i].value, value) << i;
    ASSERT_EQ(counts[i].count, count) << i;
    ++i;
  }
}

namespace {

// The precision table as it was computed from every step held in memory (a selection among them), the
// reference the counted steps must give to the bit.
PrecisionResult precision_of_held_steps(std::vector<double> steps_ns, uint64_t tsc_hz) {
  PrecisionResult result;
  result.steps = steps_ns.size();
  result.epsilon_ns = ns_per_tick(tsc_hz);
  QuantileSelector steps(steps_ns);
  result.step = summarize(steps);
  for (double coverage : kDefaultCoverages) {
    CoverageLevel level;
    level.tau_ns = steps.quantile(coverage);
    level.pi_ns = level.tau_ns + result.epsilon_ns;
    level.steps_within = steps.count_at_most(level.tau_ns);
    result.levels.push_back(level);
  }
  const int bins = PrecisionOptions{}.bins;
  const double lo = result.step.min, hi = result.step.max;
  const double quantile = steps.quantile(0.997);
  const double body_hi = quantile > lo && quantile < hi ? quantile : hi;
  const double width = body_hi > lo ? (body_hi - lo) / bins : 1.0;
  const int used = body_hi > lo ? bins : 1;
  for (int i = 0; i < used; ++i) result.histogram.push_back({lo + i * width, lo + (i + 1) * width, 0});
  if (body_hi < hi) result.histogram.push_back({body_hi, hi, 0, true});
  for (double step : steps_ns) {
    if (step > body_hi) {
      result.histogram.back().count++;
      continue;
    }
    const int bin = static_cast<int>((step - lo) / width);
    result.histogram[static_cast<size_t>(std::clamp(bin, 0, used - 1))].count++;
  }
  return result;
}

}  // namespace

// Steps of a 2.9 GHz TSC (fractional ns) with a few long ones, more than one sort batch of them: the table
// from the counted steps equals the one from the steps held whole.
TEST(AnalysisPrecision, CountedStepsGiveTheTableOfTheStepsHeldWhole) {
  constexpr uint64_t kHz = 2'900'123'000;
  std::mt19937_64 random(17);
  Capture capture;
  capture.info.tsc_hz = kHz;
  capture.info.mode = "calibrate";
  uint64_t tsc = 5000;
  for (uint64_t i = 0; i < 2'300'000; ++i) {
    tsc += random() % 1000 == 0 ? 20'000 + random() % 3'000'000 : 700 + random() % 64;
    capture.events.push_back({i, 0, 0, 0, tsc, 0});
  }
  const PrecisionResult expected = precision_of_held_steps(loop_steps_ns(capture), kHz);
  auto got = analyze_precision(capture);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->steps, expected.steps);
  EXPECT_EQ(got->step.min, expected.step.min);
  EXPECT_EQ(got->step.p50, expected.step.p50);
  EXPECT_EQ(got->step.p99, expected.step.p99);
  EXPECT_EQ(got->step.max, expected.step.max);
  EXPECT_DOUBLE_EQ(got->step.mean, expected.step.mean);
  EXPECT_DOUBLE_EQ(got->step.stddev, expected.step.stddev);
  ASSERT_EQ(got->levels.size(), expected.levels.size());
  for (size_t i = 0; i < expected.levels.size(); ++i) {
    EXPECT_EQ(got->levels[i].tau_ns, expected.levels[i].tau_ns) << i;
    EXPECT_EQ(got->levels[i].pi_ns, expected.levels[i].pi_ns) << i;
    EXPECT_EQ(got->levels[i].steps_within, expected.levels[i].steps_within) << i;
  }
  ASSERT_EQ(got->histogram.size(), expected.histogram.size());
  for (size_t i = 0; i < expected.histogram.size(); ++i) {
    EXPECT_EQ(got->histogram[i].lo_ns, expected.histogram[i].lo_ns) << i;
    EXPECT_EQ(got->histogram[i].hi_ns, expected.histogram[i].hi_ns) << i;
    EXPECT_EQ(got->histogram[i].count, expected.histogram[i].count) << i;
    EXPECT_EQ(got->histogram[i].tail, expected.histogram[i].tail) << i;
  }
}

// Values with many ties and many distinct ones, more than a sort batch (1 M) and a table that outgrows it:
// the same quantiles, count and summary as the values held whole.
// Values of both signs, ties, zeros of both signs, quantiles in one bucket or two: the summary of the values
// held whole, to the bit, keeping only the quantiles' buckets.
TEST(TwoPassSummary, IsTheSummaryOfTheValuesHeldWhole) {
  std::mt19937_64 random(31);
  std::exponential_distribution<double> gap(1.0 / 40'000);
  for (const int kind : {0, 1, 2}) {
    std::vector<double> values;
    for (int i = 0; i < 1'000'000; ++i)
      values.push_back(kind == 0   ? gap(random)
                       : kind == 1 ? static_cast<double>(random() % 7) - 3
                                   : (i % 2 ? -1 : 1) * gap(random) * 1e-300);
    values.push_back(-0.0);
    TwoPassSummary two;
    for (double v : values) two.add_first(v);
    two.start_second();
    for (double v : values) two.add_second(v);
    if (kind == 0) {
      EXPECT_LT(two.kept_count(), 2000u);  // of a million
    }
    const Summary got = two.finish();
    const Summary expected = summarize(std::span<const double>(values));
    EXPECT_EQ(got.count, expected.count) << kind;
    EXPECT_EQ(got.mean, expected.mean) << kind;
    EXPECT_EQ(got.stddev, expected.stddev) << kind;
    EXPECT_EQ(got.min, expected.min) << kind;
    EXPECT_EQ(got.p50, expected.p50) << kind;
    EXPECT_EQ(got.p99, expected.p99) << kind;
    EXPECT_EQ(got.max, expected.max) << kind;
  }
  TwoPassSummary empty;
  empty.start_second();
  EXPECT_EQ(empty.finish().count, 0u);
}

TEST(ValueCounts, AnswersLikeTheValuesHeldWhole) {
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> wide(-1e9, 1e9);
  std::vector<double> values;
  ValueCounts counts;
  for (int i = 0; i < 3'500'000; ++i) {
    const double v = i % 3 ? static_cast<double>(random() % 50) : wide(random);
    values.push_back(v);
    counts.add(v);
  }
  for (double v : {0.0, -0.0, 1e-300, -3e9, 3e9}) {
    values.push_back(v);
    counts.add(v);
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(counts.count(), sorted.size());
  for (double fraction : {0.0, 0.001, 0.25, 0.5, 0.955, 0.99, 0.997, 1.0})
    EXPECT_EQ(counts.quantile(fraction), nearest_rank(sorted, fraction)) << fraction;
  for (double limit : {-1e10, -5.0, 0.0, 7.0, 49.0, 1e10})
    EXPECT_EQ(counts.count_at_most(limit),
              static_cast<uint64_t>(std::upper_bound(sorted.begin(), sorted.end(), limit) - sorted.begin()))
        << limit;
  const Summary whole = summarize(std::span<const double>(values));
  const Summary counted = summarize(counts);
  EXPECT_EQ(counted.count, whole.count);
  EXPECT_EQ(counted.min, whole.min);
  EXPECT_EQ(counted.max, whole.max);
  EXPECT_EQ(counted.p50, whole.p50);
  EXPECT_EQ(counted.p99, whole.p99);
  EXPECT_NEAR(counted.mean, whole.mean, 1e-9 * std::abs(whole.stddev));
  EXPECT_DOUBLE_EQ(counted.stddev, whole.stddev);
  counts.clear();
  EXPECT_EQ(counts.count(), 0u);
  EXPECT_EQ(summarize(counts).count, 0u);
}

TEST(QuantileSelector, AnswersLikeASortedCopyInAnyOrderOfQuestions) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> wide(-1e12, 1e12);
  std::uniform_int_distribution<int> few(0, 20);
  std::vector<double> values;
  // Wide values of both signs and many ties (few distinct values), so a stretch between fixed positions can
  // hold the same value on both of its ends.
  for (int i = 0; i < 20000; ++i) values.push_back(i % 2 ? wide(random) : few(random));
  for (double v : {0.0, 5.0, 5.0, -5.0, 1e-300, -1e-300, 1e300, -1e300, 123.5}) values.push_back(v);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  QuantileSelector selector(values);
  for (double fraction : {0.99, 0.5, 0.5, 0.0, 1.0, 0.955, 0.25, 0.997, 0.7501, 0.7502, 0.001})
    EXPECT_EQ(selector.quantile(fraction), nearest_rank(sorted, fraction)) << "fraction " << fraction;
  std::uniform_int_distribution<size_t> index(0, sorted.size() - 1);
  for (int i = 0; i < 200; ++i) {
    const size_t at = index(random);
    ASSERT_EQ(selector.at(at), sorted[at]) << "index " << at;
  }
  for (double limit : {-1e300, -5.0, 0.0, 5.0, 20.0, 1e12, 1e300})
    EXPECT_EQ(selector.count_at_most(limit),
              static_cast<size_t>(std::upper_bound(sorted.begin(), sorted.end(), limit) - sorted.begin()));
  std::vector<double> reordered = values;
  std::sort(reordered.begin(), reordered.end());
  EXPECT_EQ(reordered, sorted);  // reordered, nothing lost
}

TEST(AnalysisStats, SummaryOfManyValuesMatchesASortedReference) {
  std::mt19937_64 random(11);
  std::exponential_distribution<double> gap(1.0 / 40'000);
  std::vector<double> values;
  for (int i = 0; i < 100'000; ++i) values.push_back(200 + gap(random));
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  const double mean = sum / static_cast<double>(sorted.size());
  double squares = 0;
  for (double v : sorted) squares += (v - mean) * (v - mean);
  const Summary s = summarize(values);
  EXPECT_EQ(s.count, sorted.size());
  EXPECT_NEAR(s.mean, mean, 1e-9 * mean);
  EXPECT_NEAR(s.stddev, std::sqrt(squares / static_cast<double>(sorted.size() - 1)), 1e-9 * mean);
  EXPECT_EQ(s.min, sorted.front());
  EXPECT_EQ(s.max, sorted.back());
  EXPECT_EQ(s.p50, nearest_rank(sorted, 0.50));
  EXPECT_EQ(s.p99, nearest_rank(sorted, 0.99));
}
