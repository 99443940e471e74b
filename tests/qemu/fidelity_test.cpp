// fidelity_test.cpp: `ett fidelity` after a real `ett qemu run --sent-log`: the report it recomputes from the
// trace disk, the sent log and its .run.json is the one the run printed, in every format.
#include <nlohmann/json.hpp>

#include "qemu_test_support.h"

namespace ett::test {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A short run on `clock`, then `ett fidelity` in each format against the run's own report.
void expect_offline_report_is_the_runs(const std::string& clock) {
  ScratchDir dir;
  std::vector<ScenarioEvent> events;
  for (int i = 0; i < 60; ++i) events.push_back({100.0 + i * 400.0, 1 + i % 2, 1 + (i / 2) % 15});
  write_scenario(dir / "scenario.txt", events);
  const std::string disk = (dir / "trace.img").string(), sent = (dir / "sent.csv").string();
  const CommandResult run =
      run_ett({"qemu", "run", "--disk", disk, "--scenario", (dir / "scenario.txt").string(), "--sent-log",
               sent, "--clock", clock, "--fidelity-json", (dir / "run.json").string(), "--fidelity-out",
               (dir / "run.csv").string(), "--fidelity-format", "csv", "--timeout", "120"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_TRUE(fs::exists(dir / "sent.run.json")) << "the run describes itself beside its sent log";
  const json from_run = json::parse(slurp(dir / "run.json"));
  ASSERT_EQ(from_run.size(), 1u);
  EXPECT_EQ(from_run.at(0).at("guest_clock"), clock == "guest");
  EXPECT_EQ(from_run.at(0).at("sent"), 60);

  auto fidelity = [&](const std::string& format) {
    const fs::path out = dir / ("fidelity." + format);
    const CommandResult offline =
        run_ett({"fidelity", disk, "--sent-log", sent, "--format", format, "-o", out.string()});
    EXPECT_EQ(offline.exit_code, 0) << offline.output;
    EXPECT_EQ(offline.output, "") << "no warning: the .run.json is there";
    return slurp(out);
  };
  // JSON: the object --fidelity-json wrote, key for key.
  const json offline = json::parse(fidelity("json"));
  EXPECT_EQ(offline, from_run);
  // JSON Lines: one object a line, the same.
  const std::vector<std::string> jsonl = lines_of(fidelity("jsonl"));
  ASSERT_EQ(jsonl.size(), 1u);
  EXPECT_EQ(json::parse(jsonl.at(0)), from_run.at(0));
  // CSV: the keys as header, the values as the row; --fidelity-out of the run wrote the same text.
  const std::string csv = fidelity("csv");
  EXPECT_EQ(csv, slurp(dir / "run.csv"));
  const std::vector<std::string> rows = lines_of(csv);
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<std::string> keys = split_csv_line(rows.at(0)), values = split_csv_line(rows.at(1));
  ASSERT_EQ(keys.size(), from_run.at(0).size());
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const json& value = from_run.at(0).at(keys[i]);
    if (value.is_null())
      EXPECT_EQ(values[i], "") << keys[i];
    else
      EXPECT_EQ(json::parse(values[i]), value) << keys[i];
  }
  // Text: the lines the run printed.
  const std::string text = fidelity("text");
  ASSERT_NE(text.find("  fidelity:"), std::string::npos) << text;
  EXPECT_NE(run.output.find(text), std::string::npos) << "offline:\n" << text << "run:\n" << run.output;

  // --check as the run's: 0 for a complete capture within the default tolerance (5000 us), else 6; a sent log
  // missing a write the capture saw makes it 6.
  const json& report = from_run.at(0);
  auto within = [&](const char* key) {
    return report.at(key).is_null() || report.at(key).get<double>() <= 5e6;
  };
  const bool passes =
      report.at("clean").get<bool>() && within("interval_error_max_ns") && within("schedule_error_max_ns");
  EXPECT_EQ(
      run_ett({"fidelity", disk, "--sent-log", sent, "--check", "-o", "/dev/null", "--force"}).exit_code,
      passes ? 0 : 6);
  std::vector<std::string> sent_lines = lines_of(slurp(sent));
  sent_lines.erase(sent_lines.begin() + 10);
  {
    std::ofstream edited(dir / "edited.csv");
    for (const std::string& line : sent_lines) edited << line << "\n";
  }
  fs::copy_file(dir / "sent.run.json", dir / "edited.run.json");
  const CommandResult checked =
      run_ett({"fidelity", disk, "--sent-log", (dir / "edited.csv").string(), "--check", "--format", "json",
               "-o", (dir / "edited.json").string()});
  EXPECT_EQ(checked.exit_code, 6) << checked.output;
  EXPECT_NE(checked.output.find("--check: the capture lost, invented or reordered events"), std::string::npos)
      << checked.output;
  EXPECT_EQ(json::parse(slurp(dir / "edited.json")).at(0).at("unexpected"),
            report.at("unexpected").get<int>() + 1);
}

TEST(Fidelity, OfflineReportEqualsTheRunsOnTheGuestClock) {
  expect_offline_report_is_the_runs("guest");
}

// The host's clock: the pairing needs the offset bounds the runner saw, which only the .run.json keeps.
TEST(Fidelity, OfflineReportEqualsTheRunsOnTheHostClock) {
  expect_offline_report_is_the_runs("host");
}

// Two machines: `--machines 2` reads trace-1.img/sent-1.csv and trace-2.img/sent-2.csv, and machine 2's row
// carries the alignment truth the run computed.
TEST(Fidelity, OfflineReportOfSeveralMachinesEqualsTheRuns) {
  ScratchDir dir;
  std::vector<ScenarioEvent> events;
  for (int i = 0; i < 20; ++i) events.push_back({100.0 + i * 500.0, 1, 1 + i % 15});
  write_scenario(dir / "scenario.txt", events);
  const std::string disk = (dir / "trace.img").string(), sent = (dir / "sent.csv").string();
  const CommandResult run =
      run_ett({"qemu", "run", "--disk", disk, "--scenario", (dir / "scenario.txt").string(), "--sent-log",
               sent, "--machines", "2", "--sync-probe", "2", "--fidelity-json", (dir / "run.json").string(),
               "--timeout", "120"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_TRUE(fs::exists(dir / "sent-2.run.json"));
  const json from_run = json::parse(slurp(dir / "run.json"));
  ASSERT_EQ(from_run.size(), 2u);
  ASSERT_TRUE(from_run.at(1).contains("truth_offset_ns"));
  const CommandResult offline = run_ett({"fidelity", disk, "--sent-log", sent, "--machines", "2", "--format",
                                         "json", "-o", (dir / "offline.json").string()});
  ASSERT_EQ(offline.exit_code, 0) << offline.output;
  EXPECT_EQ(json::parse(slurp(dir / "offline.json")), from_run);
  const CommandResult text = run_ett(
      {"fidelity", disk, "--sent-log", sent, "--machines", "2", "-o", (dir / "offline.txt").string()});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(run.output.find(slurp(dir / "offline.txt")), std::string::npos)
      << "offline:\n"
      << slurp(dir / "offline.txt") << "run:\n"
      << run.output;
}

}  // namespace
}  // namespace ett::test
