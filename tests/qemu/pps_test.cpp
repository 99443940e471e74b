// pps_test.cpp: a PPS line played by `ett qemu run --pps-line D7` turns the capture's TSC stamps into UTC:
// the rate and the events' UTC against the truth the run wrote to its sent log, and two machines aligned
// through their UTC mappings alone.
#include "analysis/pps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/input.h"
#include "qemu_test_support.h"

namespace ett::test {
namespace {

// A number from the JSON `ett` printed: `field` of the document (an object), or of its k-th element that has
// that field (an array, e.g. one object per machine or per trace).
double json_field(const std::string& json, const std::string& field, size_t k = 0) {
  const auto doc = nlohmann::json::parse(json, nullptr, false);
  const nlohmann::json* scope = &doc;
  if (!doc.is_discarded() && doc.is_object() && doc.contains("traces")) scope = &doc["traces"];
  if (!doc.is_discarded() && scope->is_object() && k == 0 && scope->contains(field) &&
      (*scope)[field].is_number())
    return (*scope)[field].get<double>();
  if (!doc.is_discarded() && scope->is_array()) {
    size_t seen = 0;
    for (const auto& element : *scope)
      if (element.is_object() && element.contains(field) && element[field].is_number() && seen++ == k)
        return element[field].get<double>();
  }
  ADD_FAILURE() << "no number " << field << " #" << k << " in " << json.substr(0, 400);
  return -1;
}

// Times to the nanosecond, never in exponent form (the shared write_scenario prints six digits).
void write_exact_scenario(const fs::path& path, const std::vector<ScenarioEvent>& events) {
  std::ofstream out(path);
  out << std::fixed << std::setprecision(3);
  for (const auto& event : events) out << event.time_us << ' ' << event.probe << ' ' << event.code << '\n';
}

// One write the harness made, with its true UTC (ns since 1970) from the sent log.
struct SentRow {
  int probe = 0;
  int64_t utc_ns = 0;
  bool pps_rise = false;
  int64_t pps_second = 0;
  uint64_t guest_tsc = 0;  // the guest clock of the write (guest-clock runs)
};

std::vector<SentRow> read_sent(const fs::path& path) {
  const CsvTable table = read_csv(path);
  std::vector<SentRow> rows;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    SentRow row;
    row.probe = static_cast<int>(table.number(i, "probe"));
    row.utc_ns = table.number(i, "utc_ns");
    const auto& fields = table.rows[i];
    const size_t edge = table.column("pps_edge");
    row.pps_rise = edge < fields.size() && fields[edge] == "rise";
    if (row.pps_rise) row.pps_second = table.number(i, "pps_second");
    // The guest clock of the write: when it was due, or the clock published before a late store.
    row.guest_tsc = static_cast<uint64_t>(
        std::max(table.number(i, "guest_tsc_due"), table.number(i, "guest_tsc_before")));
    rows.push_back(row);
  }
  return rows;
}

std::string iso_second(int64_t second) {
  std::time_t t = second;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())))];
}

// Runs `ett analyze pps` on trace `id`, labelled from the truth: the sent log's pulse nearest to the first
// accepted one (guest TSC) names its second. The capture's CMOS start time is no help here: under -icount the
// guest's CMOS clock follows the guest's time, not the host's (one run labelled a second early).
std::string analyze_pps(const std::string& db, int id, const std::vector<SentRow>& rises) {
  auto pps = run_ett(
      {"analyze", "pps", "--db", db, "--trace", std::to_string(id), "--line", "D7", "--format", "json"});
  EXPECT_EQ(pps.exit_code, 0) << pps.output;
  const double first_tsc = json_field(pps.output, "first_pulse_tsc");
  const SentRow* nearest = &rises.front();
  for (const SentRow& rise : rises)
    if (std::abs(static_cast<double>(rise.guest_tsc) - first_tsc) <
        std::abs(static_cast<double>(nearest->guest_tsc) - first_tsc))
      nearest = &rise;
  pps = run_ett({"analyze", "pps", "--db", db, "--trace", std::to_string(id), "--line", "D7", "--format",
                 "json", "--utc-at-edge", "1=" + iso_second(nearest->pps_second)});
  EXPECT_EQ(pps.exit_code, 0) << pps.output;
  return pps.output;
}

// The loose bound the tests assert on UTC errors; the goal on a quiet machine is 50 us (docs/guide/absolute-time.md, "Absolute
// time: a PPS line", gives the measured figures).
constexpr double kUtcBoundNs = 1e6;

TEST(PpsBoot, TenSecondCaptureGivesRateAndUtcOfEvents) {
  ScratchDir dir;
  std::vector<ScenarioEvent> events;
  // 10.5 s of events on probe 1 every 50 ms; D7 (probe 2's top line) carries the PPS.
  for (int i = 0; i < 210; ++i) events.push_back({i * 50'000.0 + 123.0, 1, 1 + i % 15});
  write_exact_scenario(dir / "scenario.txt", events);
  auto run = run_ett({"qemu", "run", "--disk", (dir / "trace.img").string(), "--scenario",
                      (dir / "scenario.txt").string(), "--sent-log", (dir / "sent.csv").string(),
                      "--pps-line", "D7", "--pps-jitter-ns", "100", "--timeout", "200", "--memory", "64"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("pps:            D7"), std::string::npos) << run.output;
  const std::vector<SentRow> sent = read_sent(dir / "sent.csv");
  std::vector<SentRow> rises, scenario_rows;
  for (const SentRow& row : sent) {
    if (row.pps_rise) rises.push_back(row);
    if (row.probe == 1) scenario_rows.push_back(row);
  }
  ASSERT_GE(rises.size(), 11u);
  ASSERT_EQ(scenario_rows.size(), events.size());
  // Each rise is its second plus the modelled receiver jitter (100 ns), or later when the injector was late
  // (a busy host: it was descheduled while the guest ran on); the truth records that, and the analysis must
  // reject such a pulse as off the grid or keep it within its fit.
  size_t late = 0;
  for (const SentRow& rise : rises) {
    const int64_t off = rise.utc_ns - rise.pps_second * 1'000'000'000;
    EXPECT_GT(off, -1000) << "a pulse before its second";
    if (off > 100'000) ++late;
  }

  const std::string db = "sqlite:" + (dir / "traces.db").string();
  auto load = run_ett({"load", (dir / "trace.img").string(), "--db", db});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  const std::string pps = analyze_pps(db, 1, rises);
  EXPECT_GE(json_field(pps, "pulses"), static_cast<double>(rises.size() - late - 1)) << pps;
  std::printf("%zu pulses sent, %zu of them late by more than 100 us; %s\n", rises.size(), late, pps.c_str());

  // The truth's rate: the guest's UTC is a linear map of its TSC (docs/guide/absolute-time.md), whose slope the sent log's pulses
  // give (the guest TSC of each rise against its true UTC).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(rises.size());
  for (const SentRow& rise : rises) {
    const double x = static_cast<double>(rise.utc_ns - rises.front().utc_ns) / 1e9;
    const double y = static_cast<double>(rise.guest_tsc - rises.front().guest_tsc);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double truth_hz = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double fitted_hz = json_field(pps, "tsc_hz");
  const double stderr_hz = json_field(pps, "uncertainty_hz");
  const double error_ppm = (fitted_hz - truth_hz) / truth_hz * 1e6;
  std::printf("PPS rate: fitted %.3f Hz +- %.3f Hz, truth %.3f Hz: %+.4f ppm (%.1f sigma)\n", fitted_hz,
              stderr_hz, truth_hz, error_ppm, std::abs(fitted_hz - truth_hz) / std::max(stderr_hz, 1e-9));
  // The goal is 1 ppm (met on a quiet machine, see docs/guide/absolute-time.md); on a loaded host pulses stamped tens of us late
  // widen the fit's own uncertainty past it (1.5 ppm with a p99 jitter of 39 us in one CI run), which the fit
  // then says: within 1 ppm or within three of its standard errors, and that uncertainty itself far below the
  // board crystal's tens of ppm that PPS is there to remove.
  const double stderr_ppm = stderr_hz / truth_hz * 1e6;
  EXPECT_LT(std::abs(error_ppm), std::max(1.0, 3 * stderr_ppm)) << pps;
  EXPECT_LT(stderr_ppm, 10.0) << pps;
  // Honest: the truth lies within a few of the fit's standard errors (or a tenth of a ppm, the floor a fit of
  // pulses stamped to a poll's step cannot go below).
  EXPECT_LE(std::abs(fitted_hz - truth_hz), std::max(5 * stderr_hz, 0.1e-6 * truth_hz)) << pps;

  // The UTC of every scenario event from the stored mapping, against the truth: the k-th captured change of
  // probe 1 is the k-th write to it (nothing is lost on the guest's clock).
  auto loaded = host::open_trace(db, 1);
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto mapping = host::find_pps(*loaded->db, 1);
  ASSERT_TRUE(mapping && *mapping);
  std::vector<double> errors;
  size_t k = 0;
  for (const host::AnalysisEvent& event : loaded->capture.events) {
    if (event.probe != 1) continue;
    ASSERT_LT(k, scenario_rows.size());
    const host::UtcNs utc = (*mapping)->utc_of_tsc(event.tsc);
    const int64_t utc_ns = utc.second * 1'000'000'000 + utc.nanosecond;
    errors.push_back(static_cast<double>(utc_ns - scenario_rows[k++].utc_ns));
  }
  ASSERT_EQ(k, scenario_rows.size());
  std::vector<double> magnitudes;
  for (double e : errors) magnitudes.push_back(std::abs(e));
  std::printf("UTC of %zu events against the truth: |error| p50 %.0f ns, p99 %.0f ns, max %.0f ns\n",
              errors.size(), percentile(magnitudes, 0.5), percentile(magnitudes, 0.99),
              percentile(magnitudes, 1.0));
  EXPECT_LT(percentile(magnitudes, 1.0), kUtcBoundNs);

  // --time utc on an analysis prints the same instants.
  auto durations = run_ett({"analyze", "durations", "--db", db, "--trace", "1", "--from", "1:1", "--to",
                            "1:2", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(durations.exit_code, 0) << durations.output;
  EXPECT_NE(durations.output.find(",start_utc,end_utc"), std::string::npos) << durations.output;
  EXPECT_NE(durations.output.find(iso_second(rises.front().pps_second).substr(0, 13)), std::string::npos)
      << durations.output;
}

TEST(PpsBoot, TwoMachinesWithoutASyncLineAlignThroughUtc) {
  ScratchDir dir;
  std::vector<ScenarioEvent> events;
  for (int i = 0; i < 80; ++i) events.push_back({i * 50'000.0 + 77.0, 1, 1 + i % 15});
  write_exact_scenario(dir / "scenario.txt", events);
  auto run = run_ett({"qemu", "run", "--disk", (dir / "trace.img").string(), "--scenario",
                      (dir / "scenario.txt").string(), "--sent-log", (dir / "sent.csv").string(),
                      "--fidelity-json", (dir / "fidelity.json").string(), "--machines", "2", "--pps-line",
                      "D7", "--timeout", "200", "--memory", "64"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string fidelity = slurp(dir / "fidelity.json");
  const std::vector<SentRow> sent1 = read_sent(dir / "sent-1.csv");
  const std::vector<SentRow> sent2 = read_sent(dir / "sent-2.csv");
  auto first_rise = [](const std::vector<SentRow>& rows) {
    for (const SentRow& row : rows)
      if (row.pps_rise) return row.pps_second;
    return int64_t{0};
  };
  ASSERT_EQ(first_rise(sent1), first_rise(sent2));

  const std::string db = "sqlite:" + (dir / "traces.db").string();
  for (const char* disk : {"trace-1.img", "trace-2.img"}) {
    auto load = run_ett({"load", (dir / disk).string(), "--db", db});
    ASSERT_EQ(load.exit_code, 0) << load.output;
  }
  auto rises_of = [](const std::vector<SentRow>& rows) {
    std::vector<SentRow> rises;
    for (const SentRow& row : rows)
      if (row.pps_rise) rises.push_back(row);
    return rises;
  };
  analyze_pps(db, 1, rises_of(sent1));
  analyze_pps(db, 2, rises_of(sent2));
  auto align = run_ett({"analyze", "align", "--db", db, "--traces", "1,2", "--pps", "--format", "json"});
  ASSERT_EQ(align.exit_code, 0) << align.output;
  // The run knows where machine 2's clock lies against machine 1's (each played on its own guest clock from
  // its origin): align --pps must find it through UTC alone.
  const double offset = json_field(align.output, "offset_ns", 1);
  const double truth = json_field(fidelity, "truth_offset_ns", 0);
  std::printf("align --pps: offset %.1f ns, truth %.1f ns: %+.1f ns; pulses disagree by |p99| %.1f ns\n",
              offset, truth, offset - truth, json_field(align.output, "disagreement_p99_ns", 1));
  EXPECT_NEAR(offset, truth, kUtcBoundNs) << align.output << fidelity;
  EXPECT_GE(json_field(align.output, "seconds", 1), 3);
  EXPECT_LT(json_field(align.output, "disagreement_max_ns", 1), kUtcBoundNs) << align.output;
}

}  // namespace
}  // namespace ett::test
