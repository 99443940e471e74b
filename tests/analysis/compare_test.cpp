// compare_test.cpp: the bootstrap comparison and the regression gate on synthetic durations of known
// distributions, the robust fit against gross outliers, and `ett compare` end to end on synthetic captures.
#include "analysis/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "analysis/stats.h"
#include "image/disk_maker.h"
#include "image/session_writer.h"
#include "qemu/qemu_test_support.h"

namespace ett::host {
namespace {

constexpr double kMeanNs = 50'000;

std::vector<double> draw(std::mt19937_64& random, size_t count, double scale = 1.0, double spread = 0.05) {
  std::normal_distribution<double> normal(kMeanNs * scale, kMeanNs * spread);
  std::vector<double> values(count);
  for (double& v : values) v = normal(random);
  return values;
}

CompareOptions fast_options(uint64_t seed) {
  CompareOptions options;
  options.resamples = 400;
  options.seed = seed;
  return options;
}

TEST(Compare, FalseAlarmRateIsCloseToOneMinusConfidence) {
  // Same distribution on both sides and no allowed regression: the gate fires when the one-sided 95 % lower
  // bound of the median's difference is above 0, which should happen in about 5 % of the trials.
  constexpr int kTrials = 300;
  int alarms = 0, alarms_with_limit = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::mt19937_64 random(1000 + trial);
    CompareSide baseline{draw(random, 150)}, candidate{draw(random, 150)};
    CompareOptions options = fast_options(trial + 1);
    options.limit = {false, 0};
    auto result = compare_durations(baseline, candidate, options);
    ASSERT_TRUE(result) << result.error().message;
    alarms += result->gate.decision == GateDecision::Regression;
    options.limit = {true, 0.05};
    auto limited = compare_durations(baseline, candidate, options);
    alarms_with_limit += limited->gate.decision == GateDecision::Regression;
  }
  const double rate = static_cast<double>(alarms) / kTrials;
  std::printf("false alarms: %d of %d trials (%.1f %%), with a 5 %% limit: %d\n", alarms, kTrials, rate * 100,
              alarms_with_limit);
  EXPECT_GT(rate, 0.015) << alarms << " alarms";
  EXPECT_LT(rate, 0.10) << alarms << " alarms";
  EXPECT_EQ(alarms_with_limit, 0) << "a 5 % limit on identical distributions";
}

TEST(Compare, FiresOnATenPercentSlowdownWithAHundredActions) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 random(seed);
    CompareSide baseline{draw(random, 100)}, candidate{draw(random, 100, 1.10)};
    auto result = compare_durations(baseline, candidate, fast_options(seed));
    ASSERT_TRUE(result);
    EXPECT_EQ(result->gate.decision, GateDecision::Regression)
        << "seed " << seed << ": " << result->gate.reason;
    EXPECT_EQ(result->stats[0].verdict, Verdict::Slower);
    EXPECT_NEAR(result->stats[0].difference_ns, 0.10 * kMeanNs, 0.04 * kMeanNs);
  }
}

TEST(Compare, AFasterCandidatePassesAndSaysSo) {
  std::mt19937_64 random(7);
  CompareSide baseline{draw(random, 200)}, candidate{draw(random, 200, 0.8)};
  auto result = compare_durations(baseline, candidate, fast_options(3));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->gate.decision, GateDecision::Pass);
  for (const StatComparison& s : result->stats)
    EXPECT_EQ(s.verdict, Verdict::Faster) << compare_stat_name(s.stat);
}

TEST(Compare, DifferencesWithinPiAreNoChange) {
  std::mt19937_64 random(11);
  // A 2 % slowdown with a tight spread is clearly measured, but pi is 5 % of the mean.
  CompareSide baseline{draw(random, 400, 1.0, 0.005)}, candidate{draw(random, 400, 1.02, 0.005)};
  CompareOptions options = fast_options(5);
  options.limit = {false, 0};
  auto without_pi = compare_durations(baseline, candidate, options);
  EXPECT_EQ(without_pi->gate.decision, GateDecision::Regression);
  options.pi_ns = 0.05 * kMeanNs;
  auto with_pi = compare_durations(baseline, candidate, options);
  ASSERT_TRUE(with_pi);
  EXPECT_EQ(with_pi->stats[0].verdict, Verdict::Same);
  EXPECT_EQ(with_pi->gate.decision, GateDecision::Pass);
  EXPECT_DOUBLE_EQ(with_pi->gate.limit_ns, options.pi_ns);
}

TEST(Compare, TooFewOrMostlyStalledActionsCannotDecide) {
  std::mt19937_64 random(3);
  CompareSide few{draw(random, 10)}, enough{draw(random, 100)};
  auto result = compare_durations(few, enough, fast_options(1));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->gate.decision, GateDecision::Undecided);
  EXPECT_NE(result->gate.reason.find("baseline has 10 usable actions"), std::string::npos)
      << result->gate.reason;
  EXPECT_TRUE(result->stats.empty());
  CompareSide stalled{draw(random, 40), 60};
  auto mostly_stalled = compare_durations(enough, stalled, fast_options(1));
  EXPECT_EQ(mostly_stalled->gate.decision, GateDecision::Undecided);
  EXPECT_NE(mostly_stalled->gate.reason.find("60 of the candidate's 100 actions touch a stall"),
            std::string::npos)
      << mostly_stalled->gate.reason;
}

TEST(Compare, TheSameSeedGivesTheSameBounds) {
  std::mt19937_64 random(5);
  CompareSide baseline{draw(random, 120)}, candidate{draw(random, 120, 1.03)};
  auto first = compare_durations(baseline, candidate, fast_options(42));
  auto again = compare_durations(baseline, candidate, fast_options(42));
  auto other = compare_durations(baseline, candidate, fast_options(43));
  for (size_t s = 0; s < first->stats.size(); ++s) {
    EXPECT_EQ(first->stats[s].lower_ns, again->stats[s].lower_ns);
    EXPECT_EQ(first->stats[s].upper_ns, again->stats[s].upper_ns);
  }
  EXPECT_NE(first->stats[3].lower_ns, other->stats[3].lower_ns);
}

// The bootstrap keeps each resample as counts of the ranks it drew: its bounds are those of resamples drawn
// from the same random numbers and sorted, to the bit, ties (values drawn again and again) included.
TEST(Compare, BoundsAreThoseOfSortedResamplesOfTheSameDraws) {
  std::mt19937_64 random(9);
  CompareSide baseline{draw(random, 301)}, candidate{draw(random, 257, 1.02)};
  for (double& v : baseline.durations_ns) v = std::round(v / 500) * 500;  // many equal values
  CompareOptions options = fast_options(77);
  options.resamples = 150;
  auto result = compare_durations(baseline, candidate, options);
  ASSERT_TRUE(result);
  auto statistic = [](size_t s, const std::vector<double>& sorted) {
    if (s == 3) {
      double sum = 0;
      for (double v : sorted) sum += v;
      return sum / static_cast<double>(sorted.size());
    }
    const double fraction[] = {0.50, 0.90, 0.99};
    return nearest_rank(sorted, fraction[s]);
  };
  auto quantile = [](const std::vector<double>& sorted, double fraction) {
    const double position = fraction * static_cast<double>(sorted.size() - 1);
    const size_t below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    const double weight = position - static_cast<double>(below);
    return sorted[below] * (1 - weight) + sorted[above] * weight;
  };
  std::mt19937_64 again(options.seed);
  std::vector<double> differences[4];
  auto resample = [&](const std::vector<double>& values) {
    std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
    std::vector<double> out(values.size());
    for (double& v : out) v = values[pick(again)];
    std::sort(out.begin(), out.end());
    return out;
  };
  for (uint32_t r = 0; r < options.resamples; ++r) {
    const std::vector<double> b = resample(baseline.durations_ns), c = resample(candidate.durations_ns);
    for (size_t s = 0; s < 4; ++s) differences[s].push_back(statistic(s, c) - statistic(s, b));
  }
  ASSERT_EQ(result->stats.size(), 4u);
  for (size_t s = 0; s < 4; ++s) {
    std::sort(differences[s].begin(), differences[s].end());
    EXPECT_EQ(result->stats[s].lower_ns, quantile(differences[s], 1 - options.confidence)) << s;
    EXPECT_EQ(result->stats[s].upper_ns, quantile(differences[s], options.confidence)) << s;
  }
}

TEST(Compare, BadOptionsAreRefused) {
  CompareSide side{std::vector<double>(50, 1.0)};
  CompareOptions options;
  options.confidence = 1.5;
  EXPECT_FALSE(compare_durations(side, side, options));
  options = {};
  options.resamples = 10;
  EXPECT_FALSE(compare_durations(side, side, options));
}

TEST(Compare, AFitBootstrapBeyondItsWorkBoundIsRefusedBeforeItStartsAndDurationsTakeOrderStatistics) {
  // 100000 resamples of 60000 durations: 6e9 values drawn, more than kMaxResampledDurations.
  CompareSide side{std::vector<double>(30'000, 1.0)};
  CompareOptions options;
  options.resamples = 100'000;
  uint32_t resamples_done = 0;
  options.on_resample = [&](uint32_t done) { resamples_done = done; };
  std::vector<double> x(30'000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7);
  auto refused = compare_fits(x, x, x, x, FitMethod::Linear, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::Usage);
  EXPECT_NE(refused.error().message.find("--resamples 100000 over 60000 durations draws 6000000000 values; "
                                         "at most 4000000000 (lower --resamples to 66666 or fewer)"),
            std::string::npos)
      << refused.error().message;
  EXPECT_EQ(resamples_done, 0u);
  // The durations alone are compared from order statistics: every resample counted, the bounds those of
  // equal sides (0).
  auto compared = compare_durations(side, side, options);
  ASSERT_TRUE(compared) << compared.error().message;
  EXPECT_EQ(resamples_done, 100'000u);
  for (const StatComparison& row : compared->stats) {
    EXPECT_EQ(row.lower_ns, 0) << compare_stat_name(row.stat);
    EXPECT_EQ(row.upper_ns, 0) << compare_stat_name(row.stat);
  }
  // Within the bound every resample is counted.
  options.resamples = 150;
  CompareSide small{std::vector<double>(50, 1.0)};
  ASSERT_TRUE(compare_durations(small, small, options));
  EXPECT_EQ(resamples_done, 150u);
}

// The order-statistic bootstrap (what compare uses past kMaxResampledDurations) against the bootstrap that
// draws every value, on the same data: the same point statistics, and bounds that agree within the Monte
// Carlo error of 4000 resamples (a few % of the interval's width), for skewed durations with ties.
TEST(Compare, OrderStatisticBoundsMatchTheDrawnBootstrapStatistically) {
  std::mt19937_64 random(23);
  std::lognormal_distribution<double> service(std::log(15000.0), 0.5);
  CompareSide baseline, candidate;
  for (int i = 0; i < 20'000; ++i) baseline.durations_ns.push_back(std::round(service(random) / 3) * 3);
  for (int i = 0; i < 15'000; ++i)
    candidate.durations_ns.push_back(std::round(service(random) * 1.01 / 3) * 3);
  CompareOptions options;
  options.resamples = 4000;
  options.bootstrap = BootstrapMethod::Draws;
  auto drawn = compare_durations(baseline, candidate, options);
  options.bootstrap = BootstrapMethod::OrderStatistics;
  auto ordered = compare_durations(baseline, candidate, options);
  ASSERT_TRUE(drawn && ordered);
  ASSERT_EQ(drawn->stats.size(), ordered->stats.size());
  for (size_t s = 0; s < drawn->stats.size(); ++s) {
    const StatComparison& a = drawn->stats[s];
    const StatComparison& b = ordered->stats[s];
    EXPECT_EQ(a.baseline_ns, b.baseline_ns);
    EXPECT_EQ(a.candidate_ns, b.candidate_ns);
    const double width = a.upper_ns - a.lower_ns;
    ASSERT_GT(width, 0) << compare_stat_name(a.stat);
    EXPECT_NEAR(b.lower_ns, a.lower_ns, 0.08 * width) << compare_stat_name(a.stat);
    EXPECT_NEAR(b.upper_ns, a.upper_ns, 0.08 * width) << compare_stat_name(a.stat);
    EXPECT_NEAR(b.upper_ns - b.lower_ns, width, 0.08 * width) << compare_stat_name(a.stat);
  }
}

TEST(Compare, RegressionLimits) {
  auto percent = parse_regression_limit("5%");
  ASSERT_TRUE(percent);
  EXPECT_TRUE(percent->relative);
  EXPECT_DOUBLE_EQ(percent->value, 0.05);
  auto micro = parse_regression_limit("2.5us");
  ASSERT_TRUE(micro);
  EXPECT_FALSE(micro->relative);
  EXPECT_DOUBLE_EQ(micro->value, 2500);
  EXPECT_DOUBLE_EQ(parse_regression_limit("250ns")->value, 250);
  for (const char* bad : {"5", "-1%", "x%", "%", "3 us", "nan%"}) {
    auto parsed = parse_regression_limit(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("--max-regression"), std::string::npos);
  }
  EXPECT_FALSE(parse_compare_stat("p50"));
  EXPECT_EQ(*parse_compare_stat("p99"), CompareStat::P99);
}

// duration = 50 us + 20 ns/byte with 1 % noise, and 5 % of the actions hit by a 5 ms stall.
void line_with_outliers(std::vector<double>& x, std::vector<double>& y, uint64_t seed, double slope = 20) {
  std::mt19937_64 random(seed);
  const double sizes[] = {16, 256, 1024, 4096, 16384, 32768, 60000};
  std::normal_distribution<double> noise(0, 500);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 700; ++i) {
    const double size = sizes[i % 7];
    double duration = 50'000 + slope * size + noise(random);
    if (unit(random) < 0.05) duration += 5'000'000;
    x.push_back(size);
    y.push_back(duration);
  }
}

TEST(RobustFit, RecoversAKnownLineWhereLeastSquaresDoesNot) {
  std::vector<double> x, y;
  line_with_outliers(x, y, 9);
  auto robust = fit_robust(x, y);
  ASSERT_TRUE(robust) << robust.error().message;
  EXPECT_NEAR(robust->intercept_ns, 50'000, 1'000);
  EXPECT_NEAR(robust->slope_ns, 20, 0.2);
  EXPECT_EQ(robust->method, FitMethod::Robust);
  EXPECT_GE(robust->downweighted, 25u);  // about 35 outliers
  EXPECT_LE(robust->downweighted, 60u);
  auto linear = fit_linear(x, y);
  ASSERT_TRUE(linear);
  EXPECT_GT(std::abs(linear->intercept_ns - 50'000), 100'000) << "the stalls pull the least-squares line";
  EXPECT_EQ(linear->downweighted, 0u);
}

TEST(RobustFit, FitDurationsSuggestsItWhenTheLinearFitIsPoor) {
  std::vector<double> x, y;
  line_with_outliers(x, y, 4);
  std::vector<Action> actions;
  std::map<uint8_t, double> size_of_code;
  const double sizes[] = {16, 256, 1024, 4096, 16384, 32768, 60000};
  for (uint8_t code = 1; code <= 7; ++code) size_of_code[code] = sizes[code - 1];
  for (size_t i = 0; i < x.size(); ++i) {
    Action action;
    action.start_code = static_cast<uint8_t>(1 + i % 7);
    action.duration_ns = y[i];
    actions.push_back(action);
  }
  auto linear = fit_durations(actions, size_of_code, FitMethod::Linear);
  ASSERT_TRUE(linear);
  EXPECT_LT(linear->fit.r2, 0.5);
  ASSERT_TRUE(linear->robust_differs.has_value());
  EXPECT_NEAR(linear->robust_differs->slope_ns, 20, 0.2);
  auto robust = fit_durations(actions, size_of_code, FitMethod::Robust);
  EXPECT_FALSE(robust->robust_differs.has_value());
  EXPECT_EQ(*parse_fit_method("robust"), FitMethod::Robust);
  EXPECT_FALSE(parse_fit_method("huber"));
}

// Past kRobustCheckPoints actions the advisory robust fit takes an even sample, so that its cost stays
// bounded, and still finds the line the stalls hide from least squares.
TEST(RobustFit, TheAdvisoryCheckOfManyActionsFitsASample) {
  std::vector<double> x, y;
  for (uint64_t seed = 1; x.size() <= kRobustCheckPoints * 3 / 2; ++seed) line_with_outliers(x, y, seed);
  std::map<uint8_t, double> size_of_code;
  const double sizes[] = {16, 256, 1024, 4096, 16384, 32768, 60000};
  for (uint8_t code = 1; code <= 7; ++code) size_of_code[code] = sizes[code - 1];
  std::vector<Action> actions(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    actions[i].start_code = static_cast<uint8_t>(1 + i % 7);
    actions[i].duration_ns = y[i];
  }
  auto linear = fit_durations(actions, size_of_code, FitMethod::Linear);
  ASSERT_TRUE(linear);
  EXPECT_EQ(linear->fit.points, x.size());
  EXPECT_EQ(linear->robust_check_points, kRobustCheckPoints);
  ASSERT_TRUE(linear->robust_differs.has_value());
  EXPECT_NEAR(linear->robust_differs->slope_ns, 20, 0.2);
}

TEST(Compare, FitParametersOfASlowerPerByteCost) {
  std::vector<double> bx, by, cx, cy;
  line_with_outliers(bx, by, 21, 20);
  line_with_outliers(cx, cy, 22, 24);
  CompareOptions options = fast_options(2);
  options.resamples = 200;
  auto compared = compare_fits(bx, by, cx, cy, FitMethod::Robust, options);
  ASSERT_TRUE(compared) << compared.error().message;
  const ParameterComparison& slope = compared->parameters[1];
  EXPECT_STREQ(slope.name, "slope_ns");
  EXPECT_NEAR(slope.difference, 4, 0.4);
  EXPECT_GT(slope.lower, 3);
  EXPECT_LT(slope.upper, 5);
}

// `ett compare` through the binary: synthetic captures whose actions (probe 1 -> probe 2) have known
// durations.
class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() / ("ett-compare-" + std::to_string(getpid()));
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
    m_disk = (m_dir / "trace.img").string();
    m_db = "sqlite:" + (m_dir / "traces.db").string();
    MakeDiskOptions make;
    make.path = m_disk;
    ASSERT_TRUE(make_disk(make));
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  // Appends a capture of `count` actions with durations from N(mean, 5 %) and loads it; returns its trace id.
  int64_t add_capture(size_t count, double scale, uint64_t seed) {
    std::mt19937_64 random(seed);
    const std::vector<double> durations = draw(random, count, scale);
    std::vector<format::EventRecord> records;
    constexpr uint64_t kHz = 1'000'000'000;  // 1 tick = 1 ns
    uint64_t tsc = 2'000'000;
    for (size_t i = 0; i < count; ++i) {
      const uint8_t code = static_cast<uint8_t>(1 + i % 15);
      format::EventRecord start{}, end{};
      start.tsc = tsc;
      start.probe = 1;
      start.code = code;
      start.lines = code;
      end.tsc = tsc + static_cast<uint64_t>(durations[i]);
      end.probe = 2;
      end.code = code;
      end.lines = static_cast<uint8_t>(code | code << 4);
      records.push_back(start);
      records.push_back(end);
      tsc = end.tsc + 100'000;
    }
    auto writer = SessionWriter::open(m_disk);
    EXPECT_TRUE(writer);
    SessionSpec spec;
    spec.records = records;
    spec.tsc_hz = kHz;
    EXPECT_TRUE(writer->append(spec));
    auto loaded = test::run_ett({"load", m_disk, "--db", m_db});
    EXPECT_EQ(loaded.exit_code, 0) << loaded.output;
    return ++m_traces;
  }

  test::CommandResult compare(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"compare", "--db", m_db,          "--from", "1",
                                     "--to",    "2",    "--resamples", "500"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_ett(args);
  }

  std::filesystem::path m_dir;
  std::string m_disk, m_db;
  int64_t m_traces = 0;
};

TEST_F(CompareCommand, GatePassesFiresAndCannotDecide) {
  const int64_t base1 = add_capture(150, 1.0, 1), base2 = add_capture(150, 1.0, 2);
  const int64_t same = add_capture(150, 1.0, 3), slower = add_capture(150, 1.10, 4),
                tiny = add_capture(5, 1.0, 5);
  const std::string baseline = std::to_string(base1) + "," + std::to_string(base2);

  auto pass = compare({"--baseline", baseline, "--candidate", std::to_string(same), "--pi-ns", "0"});
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("PASS"), std::string::npos) << pass.output;

  const std::string json_path = (m_dir / "slower.json").string();
  auto fired = compare({"--baseline", baseline, "--candidate", std::to_string(slower), "--pi-ns", "0",
                        "--format", "json", "-o", json_path});
  EXPECT_EQ(fired.exit_code, 1) << fired.output;
  std::ifstream file(json_path);
  const nlohmann::json report = nlohmann::json::parse(file);
  EXPECT_EQ(report["gate"]["decision"], "regression");
  EXPECT_EQ(report["baseline"]["actions"], 300);
  EXPECT_EQ(report["candidate"]["actions"], 150);
  EXPECT_EQ(report["resamples"], 500);
  EXPECT_EQ(report["stats"].size(), 4u);
  EXPECT_EQ(report["stats"][0]["stat"], "median");
  EXPECT_EQ(report["stats"][0]["verdict"], "slower");
  EXPECT_NEAR(report["stats"][0]["difference_ns"].get<double>(), 5000, 1500);

  auto markdown = compare({"--baseline", baseline, "--candidate", std::to_string(slower), "--pi-ns", "0",
                           "--format", "markdown", "--stat", "p90", "--max-regression", "20%"});
  EXPECT_EQ(markdown.exit_code, 0) << "a 10 % slowdown is within 20 %: " << markdown.output;
  EXPECT_NE(markdown.output.find("| statistic | baseline |"), std::string::npos) << markdown.output;
  EXPECT_NE(markdown.output.find("**PASS**"), std::string::npos) << markdown.output;

  auto undecided = compare({"--baseline", baseline, "--candidate", std::to_string(tiny), "--pi-ns", "0"});
  EXPECT_EQ(undecided.exit_code, 7) << undecided.output;
  EXPECT_NE(undecided.output.find("UNDECIDED"), std::string::npos) << undecided.output;

  // The report shows the same comparison: both distributions on one axis and the statistics' verdicts.
  const std::string html_path = (m_dir / "report.html").string();
  auto html = test::run_ett({"report", "--db", m_db, "--trace", std::to_string(slower), "--from", "1", "--to",
                             "2", "--baseline", baseline, "--pi-ns", "0", "-o", html_path});
  ASSERT_EQ(html.exit_code, 0) << html.output;
  std::ifstream page_file(html_path);
  const std::string page((std::istreambuf_iterator<char>(page_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<h2>Comparison</h2>"), std::string::npos);
  EXPECT_NE(page.find("baseline (300 actions)"), std::string::npos);
  EXPECT_NE(page.find("candidate (150 actions)"), std::string::npos);
  EXPECT_NE(page.find("data-value=\"median\">median</td>"), std::string::npos);
  EXPECT_NE(page.find("data-value=\"slower\">slower</td>"), std::string::npos);
  auto no_actions = test::run_ett({"report", "--db", m_db, "--baseline", baseline, "-o", html_path + "2"});
  EXPECT_NE(no_actions.exit_code, 0);
  EXPECT_NE(no_actions.output.find("--baseline compares actions"), std::string::npos) << no_actions.output;

  auto bad = compare({"--baseline", baseline, "--candidate", "99"});
  EXPECT_EQ(bad.exit_code, 8) << bad.output;
  EXPECT_NE(bad.output.find("no trace 99"), std::string::npos) << bad.output;
  auto bad_limit = compare({"--baseline", baseline, "--candidate", "3", "--max-regression", "5"});
  EXPECT_EQ(bad_limit.exit_code, 8);
  EXPECT_NE(bad_limit.output.find("--max-regression '5'"), std::string::npos) << bad_limit.output;
}

}  // namespace
}  // namespace ett::host
