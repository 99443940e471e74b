// analysis_golden_test.cpp: golden tests: a synthetic capture (ett synth --events 200 --seed 7) loaded into a
// SQLite trace database, read back as `ett analyze` and `ett export` read it, and each output compared with
// tests/golden/<name>. ETT_UPDATE_GOLDEN=1 rewrites the files (review the diff before committing it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis_input.h"
#include "analysis_output.h"
#include "db_loader.h"
#include "export_csv.h"
#include "export_vcd.h"
#include "synth_capture.h"

using namespace ett::host;
namespace fs = std::filesystem;

namespace {

const fs::path kGoldenDir = fs::path(ETT_TEST_DATA_DIR).parent_path() / "golden";  // tests/golden

class AnalysisGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ett-golden-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
    SynthOptions synth;
    synth.events = 200;
    synth.seed = 7;
    auto written = write_synth_capture((m_dir / "trace.img").string(), synth);
    ASSERT_TRUE(written) << written.error().message;
    auto db = open_database("sqlite:" + (m_dir / "traces.db").string());
    ASSERT_TRUE(db) << db.error().message;
    m_db = std::move(*db);
    ASSERT_TRUE(m_db->ensure_schema());
    LoadRequest request;
    request.image = (m_dir / "trace.img").string();
    auto loaded = load_image(*m_db, request);
    ASSERT_TRUE(loaded) << loaded.error().message;
    auto capture = load_capture(*m_db, loaded->at(0).trace_id);
    ASSERT_TRUE(capture) << capture.error().message;
    m_capture = std::move(*capture);
  }
  void TearDown() override {
    m_db.reset();
    std::error_code ignored;
    if (!m_dir.empty()) fs::remove_all(m_dir, ignored);
  }

  static void expect_golden(const std::string& name, const std::string& actual) {
    const fs::path path = kGoldenDir / name;
    if (std::getenv("ETT_UPDATE_GOLDEN")) {
      std::ofstream(path, std::ios::binary) << actual;
      return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path << " is missing (ETT_UPDATE_GOLDEN=1 writes it)";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str()) << "differs from " << path;
  }

  fs::path m_dir;
  std::unique_ptr<Database> m_db;
  Capture m_capture;
};

}  // namespace

TEST_F(AnalysisGolden, CaptureReadBackFromTheDatabase) {
  EXPECT_EQ(m_capture.events.size(), 200u);
  EXPECT_EQ(m_capture.info.layout, "2x4");
  EXPECT_EQ(m_capture.info.probe_count, 2);
  EXPECT_GT(m_capture.info.tsc_hz, 0u);
  expect_golden("synth7_events.csv", export_csv(m_capture));
}

TEST_F(AnalysisGolden, DurationsWithFit) {
  auto durations = pair_actions(m_capture.events, {1, {}}, {2, {}}, 1524, PairRule::Fifo);
  ASSERT_TRUE(durations);
  std::map<uint8_t, double> sizes;
  for (int code = 0; code < 16; ++code) sizes[static_cast<uint8_t>(code)] = 16.0 * code;
  auto fit = fit_durations(durations->actions, sizes);
  ASSERT_TRUE(fit) << fit.error().message;
  expect_golden("synth7_durations.txt", format_durations(*durations, &*fit, OutputFormat::Text));
  expect_golden("synth7_durations.json", format_durations(*durations, &*fit, OutputFormat::Json));
}

TEST_F(AnalysisGolden, IntervalsAndHistogram) {
  expect_golden("synth7_intervals.csv", format_intervals(analyze_intervals(m_capture.events, 20000), OutputFormat::Csv));
  expect_golden("synth7_histogram_probe.txt",
                format_histogram(histogram(m_capture.events, *parse_histogram_by("probe"), std::nullopt),
                                 OutputFormat::Text));
  expect_golden("synth7_histogram_time.csv",
                format_histogram(histogram(m_capture.events, *parse_histogram_by("time:1ms"), *parse_trits("XXXX1XXX")),
                                 OutputFormat::Csv));
}

TEST_F(AnalysisGolden, Vcd) {
  std::string vcd = export_vcd(m_capture);
  // The build's version and the synthetic capture's date (the time it was made) are not part of the golden file.
  for (const char* line : {"$version ett ", "$date "}) {
    const size_t at = vcd.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    vcd.erase(at, vcd.find('\n', at) - at + 1);
  }
  expect_golden("synth7.vcd", vcd);
}
