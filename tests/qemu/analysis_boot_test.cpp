// analysis_boot_test.cpp: `ett analyze precision` on a real mode=calibrate capture: the kernel under QEMU
// fills a one-chunk trace disk with loop steps, `ett load` puts it in a database, and the precision table is
// checked against the steps computed here from `ett extract`'s tsc column; a normal capture from the same CPU
// then quotes the stored tau in `ett analyze intervals` and the stored pi in `ett analyze durations`.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "qemu_test_support.h"

namespace ett::test {
namespace {

// Boots `append` on `disk` with a one-event scenario (a calibrate capture ignores the lines; a capture
// records the events of `scenario`).
void boot(const ScratchDir& dir, const fs::path& disk, const std::string& append,
          const std::vector<ScenarioEvent>& scenario) {
  write_scenario(dir / "scenario.txt", scenario);
  const auto run = run_ett({"qemu", "run", "--disk", disk.string(), "--scenario",
                            (dir / "scenario.txt").string(), "--timeout", "60", "--append", append});
  ASSERT_EQ(run.exit_code, 0) << run.output;
}

TEST(AnalysisBoot, PrecisionOfARealCalibrationCaptureAndTheTauItLeaves) {
  ScratchDir dir;
  const fs::path calibration = dir / "calibrate.img";
  const std::string db = "sqlite:" + (dir / "traces.db").string();
  // One chunk (2046 records): the calibrate loop fills it at once.
  ASSERT_EQ(
      run_ett({"mkdisk", calibration.string(), "--size", std::to_string((8 + 1 + 8 + 64) * 512)}).exit_code,
      0);
  boot(dir, calibration, "mode=calibrate", {{0, 1, 1}});

  // The steps, independently: consecutive differences of the extracted tsc column.
  ASSERT_EQ(run_ett({"extract", calibration.string(), "-o", (dir / "calibrate.csv").string()}).exit_code, 0);
  const CsvTable events = read_csv(dir / "calibrate.csv");
  ASSERT_EQ(events.rows.size(), 2046u);
  int64_t max_step = 0;
  for (size_t i = 1; i < events.rows.size(); ++i)
    max_step = std::max(max_step, events.number(i, "tsc") - events.number(i - 1, "tsc"));
  const auto ls = run_ett({"ls", calibration.string(), "--json"});
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && sessions.size() == 1) << ls.output;
  const double tsc_hz = sessions[0].at("tsc_hz").get<double>();
  ASSERT_GT(tsc_hz, 1e8);

  const auto load = run_ett({"load", calibration.string(), "--db", db});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  const auto precision = run_ett({"analyze", "precision", "--format", "json", "--db", db});
  ASSERT_EQ(precision.exit_code, 0) << precision.output;
  const std::string& json = precision.output;
  const auto calibration_report = nlohmann::json::parse(json, nullptr, false);
  ASSERT_TRUE(calibration_report.is_object()) << json;
  EXPECT_EQ(calibration_report.at("source"), "calibrate") << json;
  EXPECT_EQ(calibration_report.at("steps").get<int>(), 2045) << "events - 1";
  // Each level as [coverage, tau_ns, epsilon_ns, pi_ns].
  std::vector<std::vector<double>> levels;
  for (const auto& level : calibration_report.at("levels"))
    levels.push_back({level.at("coverage").get<double>(), level.at("tau_ns").get<double>(),
                      level.at("epsilon_ns").get<double>(), level.at("pi_ns").get<double>()});
  ASSERT_EQ(levels.size(), 3u) << json;
  const double epsilon = 1e9 / tsc_hz;
  // JSON numbers carry 4 decimals.
  EXPECT_NEAR(levels[2][1], static_cast<double>(max_step) * 1e9 / tsc_hz, 1e-4)
      << "tau_100 = the largest step";
  for (const auto& level : levels) {
    EXPECT_NEAR(level[2], epsilon, 1e-4) << "epsilon = 1/tsc_hz";
    EXPECT_NEAR(level[3], level[1] + level[2], 2e-4) << "pi = tau + epsilon";
    EXPECT_GT(level[1], 0);
  }
  EXPECT_EQ(levels[0][0], 0.955);
  EXPECT_EQ(levels[1][0], 0.997);
  EXPECT_EQ(levels[2][0], 1);
  EXPECT_LE(levels[0][1], levels[1][1]);
  EXPECT_LE(levels[1][1], levels[2][1]);
  const double tau_100 = levels[2][1];

  // A normal capture from the same (virtual) CPU, on its own disk, in the same database.
  const fs::path capture = dir / "capture.img";
  std::vector<ScenarioEvent> scenario;
  for (int i = 0; i < 40; ++i) scenario.push_back({i * 300.0, 1 + i % 2, 1 + (i / 2) % 15});
  boot(dir, capture, "", scenario);
  const auto second = run_ett({"load", capture.string(), "--db", db});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("trace 2"), std::string::npos) << second.output;
  const auto intervals = run_ett({"analyze", "intervals", "--format", "json", "--db", db});
  ASSERT_EQ(intervals.exit_code, 0) << intervals.output;
  const auto report = nlohmann::json::parse(intervals.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << intervals.output;
  EXPECT_NEAR(report.at("tau_ns").get<double>(), tau_100, 1e-4);
  EXPECT_EQ(report.at("tau_from_trace").get<int>(), 1) << "measured on the calibration, trace 1";
  const auto& probes = report.at("probes");
  ASSERT_EQ(probes.size(), 2u) << intervals.output;
  EXPECT_EQ(probes[0].at("events").get<int>() + probes[1].at("events").get<int>(), 40);
  const auto text = run_ett({"analyze", "intervals", "--db", db});
  EXPECT_NE(text.output.find("measured on trace 1"), std::string::npos) << text.output;
  // The steps the no-precision hint names (`ett qemu run ... --append mode=calibrate`, `ett load`, `ett
  // analyze precision --trace ID`) are the ones above: the durations of the ordinary capture quote the stored
  // pi.
  const auto durations = run_ett({"analyze", "durations", "--from", "1", "--to", "2", "--db", db});
  ASSERT_EQ(durations.exit_code, 0) << durations.output;
  EXPECT_EQ(durations.output.find("error bound unknown"), std::string::npos) << durations.output;
  EXPECT_NE(durations.output.find("(pi of this CPU, measured on trace 1)"), std::string::npos)
      << durations.output;

  // The ordinary capture gives a capture-time estimate from its own check intervals, and says so; it is not
  // stored (the calibration's levels stay the machine's).
  const auto own = run_ett({"analyze", "precision", "--trace", "2", "--format", "json", "--db", db});
  ASSERT_EQ(own.exit_code, 0) << own.output;
  const auto own_report = nlohmann::json::parse(own.output, nullptr, false);
  ASSERT_TRUE(own_report.is_object()) << own.output;
  EXPECT_EQ(own_report.at("source"), "check-intervals") << own.output;
  ASSERT_EQ(own_report.at("levels").size(), 1u) << own.output;
  EXPECT_GT(own_report["levels"][0].at("tau_ns").get<double>(), 0) << own.output;
  EXPECT_GT(own_report.at("typical_check_ns").get<double>(), 0) << own.output;
  EXPECT_GE(own_report.at("longest_check_ns").get<double>(), own_report.at("typical_check_ns").get<double>())
      << own.output;
  const auto again = run_ett({"analyze", "intervals", "--format", "json", "--db", db});
  const auto again_report = nlohmann::json::parse(again.output, nullptr, false);
  ASSERT_TRUE(again_report.is_object()) << again.output;
  EXPECT_EQ(again_report.at("tau_from_trace").get<int>(), 1) << again.output;
}

}  // namespace
}  // namespace ett::test
