// golden_test.cpp: golden tests through the real `ett` binary: the disk of golden_cases.h goes
// through `ett load` into a SQLite file, then every line of tests/golden/cases.txt (`ett analyze ...`, `ett
// export ...`) runs and its output is compared with its file in tests/golden/. ETT_UPDATE_GOLDEN=1 rewrites
// the files (review the diff before committing it). Bad input through the binary: one clear message, a
// non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "golden/golden_cases.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

class AnalysisGolden : public ::testing::Test {
 protected:
  // One disk and one database for the suite: the cases run in file order (precision is stored before the
  // cases that quote it).
  static void SetUpTestSuite() {
    s_dir = new TempDir;
    golden::write_disk(s_dir->file("trace.img"));
    s_db = "sqlite:" + s_dir->file("traces.db");
    const golden::Run load = golden::ett({"load", s_dir->file("trace.img"), "--all", "--db", s_db});
    ASSERT_EQ(load.status, 0) << load.out << load.err;
    // Every test of the suite may run alone (ctest runs each in its own process): store the precision first.
    const golden::Run precision = ett({"analyze", "precision", "--trace", "2", "--format", "json"});
    ASSERT_EQ(precision.status, 0) << precision.err;
  }
  static void TearDownTestSuite() {
    delete s_dir;
    s_dir = nullptr;
  }

  // Runs `ett ARGS --db <the suite's database>`.
  static golden::Run ett(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(s_db);
    return golden::ett(args);
  }

  static TempDir* s_dir;
  static std::string s_db;
};

TempDir* AnalysisGolden::s_dir = nullptr;
std::string AnalysisGolden::s_db;

TEST_F(AnalysisGolden, EveryCaseMatchesItsFile) {
  const auto cases = golden::read_cases();
  ASSERT_GE(cases.size(), 20u);
  const bool update = std::getenv("ETT_UPDATE_GOLDEN") != nullptr;
  for (const golden::Case& c : cases) {
    SCOPED_TRACE("tests/golden/cases.txt:" + std::to_string(c.line) + " " + c.golden);
    golden::Run run;
    const std::string actual = golden::output_of(c, s_db, s_dir->file(""), run);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_FALSE(actual.empty());
    const auto path = golden::kDir / c.golden;
    if (update) {
      std::ofstream(path, std::ios::binary) << actual;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (ETT_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(actual, slurp(path)) << "differs from " << path;
  }
}

// The files hold what the analyses should say, not only what they said once: spot checks of the stored tau
// being quoted, and of the alignment recovering the drift and offset the disk was made with.
TEST_F(AnalysisGolden, TheFilesSayWhatTheDiskHolds) {
  const auto intervals = nlohmann::json::parse(slurp(golden::kDir / "intervals.json"));
  EXPECT_EQ(intervals.at("tau_from_trace"), 2);
  const auto durations = nlohmann::json::parse(slurp(golden::kDir / "durations_fit.json"));
  EXPECT_EQ(durations.at("pi_ns"), 2000.3333);
  EXPECT_EQ(durations.at("pi_from_trace"), 2);
  const auto precision = nlohmann::json::parse(slurp(golden::kDir / "precision.json"));
  EXPECT_EQ(precision.at("steps"), 3000);
  EXPECT_EQ(precision.at("levels").back().at("coverage"), 1.0);
  EXPECT_EQ(precision.at("levels").back().at("tau_ns"), 2000.0);  // 6000 ticks
  const std::string align = slurp(golden::kDir / "align.txt");
  EXPECT_NE(align.find("-50.0"), std::string::npos) << align;  // the second clock is 50 ppm fast
  // The merged timeline puts each sync edge of trace 4 within the fit's residuals (jitter 0-14 ns) of trace
  // 3's.
  std::istringstream timeline(slurp(golden::kDir / "align.csv"));
  std::string row;
  std::getline(timeline, row);
  std::vector<double> edges[2];
  while (std::getline(timeline, row)) {
    int trace = 0, seq = 0, probe = 0, code = 0, lines = 0;
    double time_ns = 0, ref_ns = 0;
    ASSERT_EQ(std::sscanf(row.c_str(), "%d,%d,%d,%d,%d,%lf,%lf", &trace, &seq, &probe, &code, &lines,
                          &time_ns, &ref_ns),
              7)
        << row;
    if (probe == 1) edges[trace - 3].push_back(ref_ns);
  }
  ASSERT_EQ(edges[0].size(), 20u);
  ASSERT_EQ(edges[1].size(), 20u);
  for (size_t k = 0; k < 20; ++k) EXPECT_NEAR(edges[1][k], edges[0][k], 10) << "edge " << k;
  const std::string vcd = slurp(golden::kDir / "export.vcd");
  EXPECT_NE(vcd.find("$timescale 1 ns $end"), std::string::npos);
}

// The stored rows against the steps computed here from the records the disk was made with (nearest rank).
TEST_F(AnalysisGolden, PrecisionIsStoredInTheDatabase) {
  const auto records = golden::calibrate_records();
  std::vector<double> steps;
  for (size_t i = 1; i < records.size(); ++i)
    steps.push_back(static_cast<double>(records[i].tsc - records[i - 1].tsc));
  std::sort(steps.begin(), steps.end());
  const golden::Run rows = ett({"sql", "--csv",
                                "SELECT trace_id, coverage, tau_ns, epsilon_ns, pi_ns, steps FROM "
                                "analysis_precision ORDER BY coverage"});
  ASSERT_EQ(rows.status, 0) << rows.err;
  std::istringstream lines(rows.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "trace_id,coverage,tau_ns,epsilon_ns,pi_ns,steps");
  for (const auto& [coverage, rank] : {std::pair{0.955, 2865}, {0.997, 2991}, {1.0, 3000}}) {
    ASSERT_TRUE(std::getline(lines, line)) << rows.out;
    double id, stored_coverage, tau, epsilon, pi, count;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &id, &stored_coverage, &tau, &epsilon, &pi,
                          &count),
              6)
        << line;
    EXPECT_EQ(id, 2);
    EXPECT_DOUBLE_EQ(stored_coverage, coverage);
    // `ett sql` prints 15 significant digits.
    EXPECT_NEAR(tau, steps[rank - 1] / 3.0, 1e-9) << "3 GHz: 3 ticks a ns";
    EXPECT_NEAR(epsilon, 1 / 3.0, 1e-12);
    EXPECT_NEAR(pi, tau + epsilon, 1e-9);
    EXPECT_EQ(count, 3000);
  }
  EXPECT_DOUBLE_EQ(steps.back(), 6000);
}

struct BadInput {
  std::vector<std::string> args;
  const char* message;  // part of the one line on standard error
};

TEST_F(AnalysisGolden, BadInputGivesOneClearMessageAndAnError) {
  const std::vector<BadInput> bad = {
      {{"analyze", "histogram", "--trace", "99"}, "no trace 99 in the database"},
      {{"export", "--format", "csv", "--trace", "42"}, "no trace 42 in the database"},
      {{"analyze", "durations", "--trace", "1", "--from", "5", "--to", "2"},
       "--from 5: trace 1 has layout 2x4: probes 1-2"},
      {{"analyze", "durations", "--trace", "1", "--from", "1", "--to", "2:16"},
       "--to 2:16: a probe of layout 2x4 has codes 0-15"},
      {{"analyze", "durations", "--trace", "1", "--from", "9", "--to", "2"},
       "'9': expected PROBE or PROBE:CODE"},
      {{"analyze", "durations", "--trace", "1", "--from", "1", "--to", "2", "--size-of-code", "1=16,2",
        "--fit", "linear"},
       "--size-of-code: '2' is not CODE=SIZE"},
      {{"analyze", "durations", "--trace", "1", "--from", "1", "--to", "2", "--fit", "linear"},
       "--fit linear needs --size-of-code"},
      {{"analyze", "histogram", "--trace", "1", "--match", "1X0X"}, "--match '1X0X': expected 8 trits"},
      {{"analyze", "histogram", "--trace", "1", "--match", "1X0XXXX2"}, "'2' (D0) is not 1, 0 or X"},
      {{"analyze", "histogram", "--trace", "1", "--by", "time:0ms"}, "time"},
      {{"analyze", "histogram", "--trace", "5"}, "has no events"},
      {{"analyze", "durations", "--trace", "5", "--from", "1", "--to", "2"},
       "trace 5 (golden session 5) has no events"},
      {{"analyze", "intervals"},
       "trace 5 (golden session 5) has no events"},  // --trace defaults to the newest
      {{"analyze", "precision", "--trace", "1"}, "mode=calibrate"},
      {{"analyze", "intervals", "--trace", "1", "--format", "xml"},
       "--format 'xml': expected text, csv or json"},
      {{"analyze", "align", "--traces", "3,5", "--sync", "1"}, "has no events"},
      {{"export", "--format", "svg", "--trace", "1"},
       "--format 'svg': expected vcd, perfetto, perfetto-proto or csv"},
      {{"export", "--format", "vcd", "--trace", "5"}, "has no events"},
      // CSV streams the trace: nothing written (not even the header) for one without events.
      {{"export", "--format", "csv", "--trace", "5"}, "trace 5 (golden session 5) has no events"},
      {{"export", "--format", "csv", "--trace", "5", "-o", s_dir->file("empty.csv")}, "has no events"},
      {{"report", "-o", s_dir->file("r.html"), "--trace", "1", "--from", "3", "--to", "1"},
       "--from 3: trace 1"},
  };
  for (const BadInput& b : bad) {
    std::string line;
    for (const auto& arg : b.args) line += arg + " ";
    SCOPED_TRACE(line);
    const golden::Run run = ett(b.args);
    EXPECT_NE(run.status, 0);
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_NE(run.err.find(b.message), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  EXPECT_FALSE(std::filesystem::exists(s_dir->file("r.html")));
  EXPECT_FALSE(std::filesystem::exists(s_dir->file("empty.csv")));
}

// An existing output file is never overwritten without --force.
TEST_F(AnalysisGolden, ExportKeepsAnExistingFile) {
  const std::string path = s_dir->file("keep.csv");
  std::ofstream(path) << "precious\n";
  const golden::Run run = ett({"export", "--format", "csv", "--trace", "1", "-o", path});
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(slurp(path), "precious\n");
  EXPECT_EQ(ett({"export", "--format", "csv", "--trace", "1", "-o", path, "--force"}).status, 0);
  EXPECT_EQ(slurp(path).rfind("seq,probe,code", 0), 0u);
}

// A command that writes a file refuses an existing one before it reads the trace, rather than after an
// analysis of seconds: each of these would fail on its input (no trace 99, trace 1 is not a calibration, no
// such disk), and the file's refusal is the message it gives. The file is left as it was.
TEST_F(AnalysisGolden, AnExistingOutputFileIsRefusedBeforeTheAnalysis) {
  const std::string path = s_dir->file("taken.txt");
  std::ofstream(path) << "precious\n";
  auto expect_refused = [&](const golden::Run& run, const std::string& command) {
    EXPECT_NE(run.status, 0) << command;
    EXPECT_NE(run.err.find("taken.txt: already exists; use --force"), std::string::npos)
        << command << ": " << run.err;
    EXPECT_EQ(slurp(path), "precious\n");
  };
  const std::vector<std::vector<std::string>> on_the_database = {
      {"analyze", "precision", "--trace", "1"},
      {"analyze", "histogram", "--trace", "99"},
      {"analyze", "align", "--traces", "99,98", "--sync", "1"},
      {"report", "--trace", "99"},
      {"compare", "--baseline", "99", "--candidate", "98", "--from", "1", "--to", "2"},
  };
  for (std::vector<std::string> args : on_the_database) {
    args.insert(args.end(), {"-o", path});
    expect_refused(ett(args), args[0] + " " + args[1]);
  }
  // Verbs that read a trace disk.
  expect_refused(golden::ett({"ls", s_dir->file("no-such.img"), "-o", path}), "ls");
  expect_refused(golden::ett({"fidelity", s_dir->file("no-such.img"), "--sent-log",
                              s_dir->file("no-such.csv"), "-o", path}),
                 "fidelity");
}

}  // namespace
}  // namespace ett::test
