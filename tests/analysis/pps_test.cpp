// pps_test.cpp: the PPS analysis on synthetic edges (clean, missing, doubled, off-grid and jittered pulses;
// CMOS and user labels), and `ett analyze pps` end to end.
#include "analysis/pps.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "analysis/output.h"
#include "analysis/pps_align.h"
#include "image/disk_maker.h"
#include "image/session_writer.h"
#include "qemu/qemu_test_support.h"

namespace ett::host {
namespace {

constexpr uint64_t kTrueHz = 2'100'000'000;  // the TSC against true seconds
constexpr uint64_t kStartTsc = 50'000'000;
constexpr uint64_t kCmos = 1'795'449'600;  // 2026-11-23T16:00:00Z

// A capture whose D7 carries a PPS: rising edges at whole seconds, falling 100 ms later, with `jitter_ns` of
// Gaussian jitter; probe 1 (D0-D3) counts in between. The capture started `start_fraction` s after the CMOS
// second, and the header's calibration is 30 ppm off the true rate.
struct SyntheticPps {
  int seconds = 20;
  double start_fraction = 0.3;
  double jitter_ns = 10;
  std::vector<int> drop;                        // pulse numbers without an edge
  std::vector<std::pair<int, double>> extra;    // (after pulse k, seconds later): an extra rising edge
  std::vector<std::pair<int, double>> shifted;  // (pulse k, ns): a pulse off its second
  uint64_t seed = 1;
  // The PPS line. D0..D3 (a serial port's DCD..RI): the counter toggles CTS (D2) instead of counting on
  // probe 1, so that a session from a serial port uses only the lines it has.
  int line = 7;

  Capture make() const {
    Capture capture;
    capture.info.name = "synthetic";
    capture.info.tsc_hz = static_cast<uint64_t>(kTrueHz * (1 + 30e-6));
    capture.info.capture_start_tsc = kStartTsc;
    capture.info.captured_at_unix = kCmos;
    std::mt19937_64 random(seed);
    std::normal_distribution<double> noise(0, jitter_ns);
    struct Change {
      double tsc;
      uint8_t mask, value;
    };
    std::vector<Change> changes;
    auto at = [&](double since_start_s) { return static_cast<double>(kStartTsc) + since_start_s * kTrueHz; };
    const double first = 1 - start_fraction;  // the first whole second after the start
    const auto pps = static_cast<uint8_t>(1u << line);
    const bool low = line < 4;
    for (int k = 0; k < seconds; ++k) {
      double offset_ns = noise(random);
      for (auto [pulse, ns] : shifted)
        if (pulse == k) offset_ns += ns;
      if (std::find(drop.begin(), drop.end(), k) == drop.end()) {
        changes.push_back({at(first + k) + offset_ns * 2.1, pps, pps});
        changes.push_back({at(first + k + 0.1), pps, 0x00});
      }
      for (auto [pulse, later] : extra)
        if (pulse == k) {
          changes.push_back({at(first + k + later), pps, pps});
          changes.push_back({at(first + k + later + 0.001), pps, 0x00});
        }
      if (low)
        changes.push_back({at(first + k + 0.5), 0x04, static_cast<uint8_t>((k % 2) << 2)});
      else
        changes.push_back({at(first + k + 0.5), 0x0F, static_cast<uint8_t>(1 + k % 15)});
    }
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.tsc < b.tsc; });
    uint8_t lines = 0;
    uint64_t seq = 0;
    for (const Change& c : changes) {
      lines = static_cast<uint8_t>((lines & ~c.mask) | c.value);
      AnalysisEvent event;
      event.seq = seq++;
      event.tsc = static_cast<uint64_t>(std::llround(c.tsc));
      event.lines = lines;
      event.probe = (c.mask & 0xF0) != 0 ? 2 : 1;
      event.code = event.probe == 2 ? static_cast<uint8_t>(lines >> 4) : static_cast<uint8_t>(lines & 0x0F);
      capture.events.push_back(event);
    }
    return capture;
  }
};

PpsOptions options_for(const Capture& capture) {
  PpsOptions options;
  options.captured_at_unix = capture.info.captured_at_unix;
  return options;
}

TEST(Pps, CleanPulsesGiveTheTrueRateWithAnHonestUncertainty) {
  const Capture capture = SyntheticPps{}.make();
  auto result = analyze_pps(capture, options_for(capture));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->pulses.size(), 20u);
  EXPECT_EQ(result->missing, 0);
  EXPECT_TRUE(result->rejected.empty());
  EXPECT_LT(std::abs(result->tsc_hz - kTrueHz), 5 * result->tsc_hz_stderr + 0.5)
      << result->tsc_hz << " ± " << result->tsc_hz_stderr;
  EXPECT_LT(result->uncertainty_ppb, 3);
  EXPECT_GT(result->uncertainty_ppb, 0.01);
  EXPECT_NEAR(result->jitter_p50_ns, 10 * 0.6745, 6);
  EXPECT_LT(result->jitter_max_ns, 50);
  // The header's calibration is 30 ppm off: the pulses see it.
  EXPECT_NEAR((result->header_tsc_hz - result->tsc_hz) / result->tsc_hz * 1e6, 30, 0.01);
}

TEST(Pps, CmosStartLabelsTheSecondsAndEveryTscGetsItsUtc) {
  const Capture capture = SyntheticPps{}.make();
  auto result = analyze_pps(capture, options_for(capture));
  ASSERT_TRUE(result);
  ASSERT_TRUE(result->utc_second.has_value()) << result->label_note;
  EXPECT_EQ(result->label_source, "cmos");
  EXPECT_EQ(*result->utc_second, static_cast<int64_t>(kCmos) + 1);
  // The probe-1 change half a second after pulse 4 (seq order: find it by its TSC).
  const uint64_t tsc = static_cast<uint64_t>(kStartTsc + (0.7 + 4 + 0.5) * kTrueHz);
  const UtcNs time = result->utc_of_tsc(tsc);
  EXPECT_EQ(time.second, static_cast<int64_t>(kCmos) + 5);
  EXPECT_NEAR(static_cast<double>(time.nanosecond), 500'000'000, 50);
  EXPECT_EQ(format_iso_utc(UtcNs{static_cast<int64_t>(kCmos) + 5, 123}), "2026-11-23T16:00:05.000000123Z");
}

TEST(Pps, AStartNearAWholeSecondIsAmbiguousUnlessTheUserLabels) {
  SyntheticPps near;
  near.start_fraction = 0.97;  // the first pulse comes 30 ms after the start
  const Capture capture = near.make();
  auto result = analyze_pps(capture, options_for(capture));
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->utc_second.has_value());
  EXPECT_NE(result->label_note.find("ambiguous"), std::string::npos) << result->label_note;
  PpsOptions user = options_for(capture);
  user.utc_at_pulse = *parse_utc_at_edge("3=2026-11-23T16:00:07Z");
  auto labelled = analyze_pps(capture, user);
  ASSERT_TRUE(labelled);
  EXPECT_EQ(labelled->label_source, "user");
  EXPECT_EQ(*labelled->utc_second, 1'795'449'605);
  user.utc_at_pulse = std::pair<size_t, int64_t>{21, 0};
  auto beyond = analyze_pps(capture, user);
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("accepted pulses 1 to 20"), std::string::npos)
      << beyond.error().message;
}

TEST(Pps, MissingDoubledOffGridAndJitteredPulsesAreHandledAndReported) {
  SyntheticPps messy;
  messy.drop = {5, 12};
  messy.extra = {{7, 0.15}, {10, 0.6}};  // a second pulse within the second, and one 0.6 s off the grid
  messy.shifted = {{15, 40'000}};        // 40 us late: a glitch on the grid
  const Capture capture = messy.make();
  auto result = analyze_pps(capture, options_for(capture));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->pulses.size(), 17u);  // 20 - 2 missing - 1 jittered
  EXPECT_EQ(result->missing, 3);          // seconds 5, 12 and 15 have no accepted pulse
  ASSERT_EQ(result->rejected.size(), 3u);
  EXPECT_NE(result->rejected[0].reason.find("doubled"), std::string::npos) << result->rejected[0].reason;
  EXPECT_NE(result->rejected[1].reason.find("off the 1 Hz grid"), std::string::npos)
      << result->rejected[1].reason;
  EXPECT_NE(result->rejected[2].reason.find("off the fitted line"), std::string::npos)
      << result->rejected[2].reason;
  EXPECT_LT(std::abs(result->tsc_hz - kTrueHz), 5 * result->tsc_hz_stderr + 0.5);
  EXPECT_LT(result->jitter_max_ns, 50);
  EXPECT_EQ(*result->utc_second, static_cast<int64_t>(kCmos) + 1);
}

TEST(Pps, TooFewPulsesOrABadLineAreErrors) {
  SyntheticPps two;
  two.seconds = 2;
  const Capture capture = two.make();
  auto result = analyze_pps(capture, options_for(capture));
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("2 pulses on D7"), std::string::npos) << result.error().message;
  PpsOptions bad = options_for(capture);
  bad.line = 8;
  EXPECT_FALSE(analyze_pps(capture, bad));
  PpsOptions other_line = options_for(SyntheticPps{}.make());
  other_line.line = 6;
  EXPECT_FALSE(analyze_pps(SyntheticPps{}.make(), other_line));
}

TEST(Pps, DcdOfASerialPortGivesTheMappingTheSameLineOfAParallelPortGives) {
  SyntheticPps on_d0;
  on_d0.line = 0;
  Capture lpt = on_d0.make();
  lpt.info.probe_source = static_cast<uint32_t>(format::ProbeSource::Lpt);
  Capture uart = on_d0.make();
  uart.info.probe_source = static_cast<uint32_t>(format::ProbeSource::Uart);
  auto line = pps_line(uart.info, "DCD");
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(*line, 0);
  PpsOptions options = options_for(uart);
  options.line = *line;
  auto from_uart = analyze_pps(uart, options);
  auto from_lpt = analyze_pps(lpt, options);
  ASSERT_TRUE(from_uart) << from_uart.error().message;
  ASSERT_TRUE(from_lpt) << from_lpt.error().message;
  EXPECT_EQ(from_uart->pulses.size(), 20u);
  EXPECT_EQ(from_uart->tsc_hz, from_lpt->tsc_hz);
  EXPECT_EQ(from_uart->anchor_tsc, from_lpt->anchor_tsc);
  EXPECT_EQ(from_uart->utc_second, from_lpt->utc_second);
  EXPECT_LT(std::abs(from_uart->tsc_hz - kTrueHz), 5 * from_uart->tsc_hz_stderr + 0.5);
  // Named as the source names it.
  EXPECT_TRUE(format_pps(*from_uart, OutputFormat::Text).starts_with("PPS on DCD (D0): 20 pulses"));
  EXPECT_TRUE(format_pps(*from_lpt, OutputFormat::Text).starts_with("PPS on D0: 20 pulses"));
  EXPECT_EQ(nlohmann::json::parse(format_pps(*from_uart, OutputFormat::Json))["line"], "DCD");
  // A serial port has no D4..D7, a parallel port no DCD; RI is D3 (lower case too).
  EXPECT_EQ(*pps_line(uart.info, "ri"), 3);
  EXPECT_EQ(*pps_line(uart.info, "D2"), 2);
  auto missing = pps_line(uart.info, "D7");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("D4 to D7 do not exist"), std::string::npos)
      << missing.error().message;
  auto not_serial = pps_line(lpt.info, "DCD");
  ASSERT_FALSE(not_serial);
  EXPECT_NE(not_serial.error().message.find("DCD is a serial-port line"), std::string::npos)
      << not_serial.error().message;
  EXPECT_FALSE(pps_line(lpt.info, "CARRIER"));
  // A probe number names its line when the probe is one line (8x1: probe k = D(k-1)).
  Capture single = on_d0.make();
  single.info.layout = "8x1";
  EXPECT_EQ(*pps_line(single.info, "8"), 7);
  EXPECT_FALSE(pps_line(single.info, "9"));
  EXPECT_FALSE(pps_line(lpt.info, "1"));  // 2x4: probe 1 is four lines
}

TEST(Pps, UtcTimesParse) {
  EXPECT_EQ(*parse_utc_second("2026-11-23T16:00:05Z"), 1'795'449'605);
  EXPECT_EQ(*parse_utc_second("2000-02-29T23:59:59+00:00"), 951'868'799);
  EXPECT_EQ(*parse_utc_second("2026-11-23 16:00:05"), 1'795'449'605);
  for (const char* bad : {"2026-11-23T16:00:05.5Z", "2026-13-01T00:00:00Z", "yesterday", "2026-11-23T16:00Z"})
    EXPECT_FALSE(parse_utc_second(bad)) << bad;
  EXPECT_FALSE(parse_utc_at_edge("0=2026-11-23T16:00:05Z"));
  EXPECT_FALSE(parse_utc_at_edge("2026-11-23T16:00:05Z"));
  auto edge = parse_utc_at_edge("4=2026-11-23T16:00:05Z");
  ASSERT_TRUE(edge);
  EXPECT_EQ(edge->first, 4u);
}

// Writes `capture` as a session on a new trace disk at `disk`, as if from `source`.
void write_disk(const std::string& disk, const Capture& capture,
                format::ProbeSource source = format::ProbeSource::Ivshmem) {
  MakeDiskOptions make;
  make.path = disk;
  ASSERT_TRUE(make_disk(make));
  std::vector<format::EventRecord> records;
  for (const AnalysisEvent& e : capture.events) {
    format::EventRecord r{};
    r.tsc = e.tsc;
    r.probe = e.probe;
    r.code = e.code;
    r.lines = e.lines;
    records.push_back(r);
  }
  auto writer = SessionWriter::open(disk);
  ASSERT_TRUE(writer);
  SessionSpec spec;
  spec.records = records;
  spec.tsc_hz = capture.info.tsc_hz;
  spec.capture_start_tsc = kStartTsc;
  spec.captured_at_unix = kCmos;
  spec.probe_source = source;
  ASSERT_TRUE(writer->append(spec));
}

TEST(Pps, CommandStoresTheMappingAndPrintsJson) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ett-pps-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string disk = (dir / "trace.img").string(), db = "sqlite:" + (dir / "t.db").string();
  write_disk(disk, SyntheticPps{}.make());
  ASSERT_EQ(test::run_ett({"load", disk, "--db", db}).exit_code, 0);

  // --time utc needs the mapping, and says which command makes it.
  auto unmapped =
      test::run_ett({"analyze", "durations", "--db", db, "--from", "1:1", "--to", "1:2", "--time", "utc"});
  EXPECT_EQ(unmapped.exit_code, 1) << unmapped.output;
  EXPECT_NE(unmapped.output.find("run `ett analyze pps --trace 1` first"), std::string::npos)
      << unmapped.output;

  auto run = test::run_ett({"analyze", "pps", "--db", db, "--line", "D7", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output);
  EXPECT_EQ(report["pulses"], 20);
  EXPECT_EQ(report["rejected"], 0);
  EXPECT_EQ(report["labels"], "cmos");
  EXPECT_EQ(report["utc_second"], kCmos + 1);  // pulse 1 is 16:00:01 (its own TSC within its jitter of it)
  const std::string first = report["utc_first_pulse"];
  EXPECT_TRUE(first.starts_with("2026-11-23T16:00:01.0000000") ||
              first.starts_with("2026-11-23T16:00:00.9999999"))
      << first;
  EXPECT_NEAR(report["tsc_hz"].get<double>(), kTrueHz, 10);
  EXPECT_LT(report["uncertainty_ppb"].get<double>(), 3);
  EXPECT_LT(report["jitter_p99_ns"].get<double>(), 50);

  auto stored = test::run_ett(
      {"sql", "--db", db, "--csv", "SELECT line, pulses, label_source, utc_second FROM pps_mapping"});
  ASSERT_EQ(stored.exit_code, 0) << stored.output;
  EXPECT_NE(stored.output.find("7,20,cmos,1795449601"), std::string::npos) << stored.output;

  // Probe 1 changes 0.5 s after each pulse: 1 -> 2 starts at 16:00:01.5 (within the pulses' jitter).
  auto durations = test::run_ett({"analyze", "durations", "--db", db, "--from", "1:1", "--to", "1:2",
                                  "--pair", "fifo", "--time", "utc", "--format", "json"});
  ASSERT_EQ(durations.exit_code, 0) << durations.output;
  const nlohmann::json actions = nlohmann::json::parse(durations.output);
  EXPECT_EQ(actions["time"], "utc");
  ASSERT_GE(actions["actions"].size(), 1u) << durations.output;
  const std::string start = actions["actions"][0]["start_utc"];
  EXPECT_TRUE(start.starts_with("2026-11-23T16:00:01.5000000") ||
              start.starts_with("2026-11-23T16:00:01.4999999"))
      << start;
  auto csv = test::run_ett({"analyze", "durations", "--db", db, "--from", "1:1", "--to", "1:2", "--pair",
                            "fifo", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find(",start_utc,end_utc\n"), std::string::npos) << csv.output;
  auto hist = test::run_ett({"analyze", "histogram", "--db", db, "--by", "time:1s", "--time", "utc"});
  ASSERT_EQ(hist.exit_code, 0) << hist.output;
  EXPECT_NE(hist.output.find("from (UTC)"), std::string::npos) << hist.output;
  auto by_code = test::run_ett({"analyze", "histogram", "--db", db, "--by", "code", "--time", "utc"});
  EXPECT_EQ(by_code.exit_code, 1) << by_code.output;
  auto bad_time = test::run_ett({"analyze", "histogram", "--db", db, "--by", "time:1s", "--time", "local"});
  EXPECT_EQ(bad_time.exit_code, 1) << bad_time.output;

  auto bad = test::run_ett({"analyze", "pps", "--db", db, "--line", "D9"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--line 'D9'"), std::string::npos) << bad.output;
  auto serial_name = test::run_ett({"analyze", "pps", "--db", db, "--line", "DCD"});
  EXPECT_EQ(serial_name.exit_code, 1) << serial_name.output;
  EXPECT_NE(serial_name.output.find("DCD is a serial-port line (probe=uart); the session came from "
                                    "probe=ivshmem"),
            std::string::npos)
      << serial_name.output;
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

TEST(Pps, CommandTakesASerialPortsLineNames) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ett-pps-uart-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string disk = (dir / "trace.img").string(), db = "sqlite:" + (dir / "t.db").string();
  SyntheticPps on_dcd;
  on_dcd.line = 0;
  write_disk(disk, on_dcd.make(), format::ProbeSource::Uart);
  ASSERT_EQ(test::run_ett({"load", disk, "--db", db}).exit_code, 0);
  auto run = test::run_ett({"analyze", "pps", "--db", db, "--line", "DCD", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output);
  EXPECT_EQ(report["line"], "DCD");
  EXPECT_EQ(report["pulses"], 20);
  EXPECT_EQ(report["utc_second"], kCmos + 1);
  auto d0 = test::run_ett({"analyze", "pps", "--db", db, "--line", "D0", "--no-store"});
  ASSERT_EQ(d0.exit_code, 0) << d0.output;
  EXPECT_NE(d0.output.find("PPS on DCD (D0): 20 pulses accepted"), std::string::npos) << d0.output;
  auto high = test::run_ett({"analyze", "pps", "--db", db, "--line", "D7"});
  EXPECT_EQ(high.exit_code, 1) << high.output;
  EXPECT_NE(high.output.find("ett: --line 'D7': the session came from probe=uart: its lines are DCD, DSR, "
                             "CTS and RI (D0 to D3; D4 to D7 do not exist)"),
            std::string::npos)
      << high.output;
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

// ns after kCmos of an ISO-8601 UTC text, "2026-11-23T16:00:01.500000000Z".
int64_t ns_after_cmos(const std::string& iso) {
  EXPECT_EQ(iso.size(), kIsoUtcLength) << iso;
  auto second = parse_utc_second(iso.substr(0, 19) + "Z");
  EXPECT_TRUE(second) << iso;
  if (iso.size() != kIsoUtcLength || !second) return INT64_MIN;
  return (*second - static_cast<int64_t>(kCmos)) * 1'000'000'000 + std::stoll(iso.substr(20, 9));
}

// The true UTC (ns after kCmos) of an event at `time_ns` of a SyntheticPps capture that started
// `start_fraction` s after the CMOS second: time_ns counts the header's (30 ppm off) ticks, the truth kTrueHz
// ones.
double true_ns_after_cmos(double time_ns, double start_fraction) {
  const double header_hz = static_cast<double>(kTrueHz) * (1 + 30e-6);
  return start_fraction * 1e9 + time_ns * header_hz / static_cast<double>(kTrueHz);
}

// CSV rows as column name -> value.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

// The report's data: the JSON of its #ett-data script element.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"ett-data\">";
  const size_t at = html.find(open);
  if (at == std::string::npos) return nullptr;
  const size_t from = at + open.size(), to = html.find("</script>", from);
  return nlohmann::json::parse(html.substr(from, to - from));
}

// `--time utc` on every verb that prints times besides durations and histogram: intervals, align (--sync and
// --pps), the event queries (and window's UTC bounds), report; each refused for a trace without a mapping.
// Two captures of the same PPS (and the same probe-1 counting) started 0.3 and 0.6 s into the CMOS second;
// only trace 1 gets its mapping at first. Every UTC printed is checked against the synthetic truth (1 us: the
// pulses' 10 ns jitter through the fit).
TEST(Pps, TimeUtcOnIntervalsAlignQueriesAndReport) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ett-pps-utc-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = "sqlite:" + (dir / "t.db").string();
  SyntheticPps late;
  late.start_fraction = 0.6;
  late.seed = 2;
  write_disk((dir / "a.img").string(), SyntheticPps{}.make());
  write_disk((dir / "b.img").string(), late.make());
  ASSERT_EQ(test::run_ett({"load", (dir / "a.img").string(), "--db", db}).exit_code, 0);
  ASSERT_EQ(test::run_ett({"load", (dir / "b.img").string(), "--db", db}).exit_code, 0);
  auto mapped = test::run_ett({"analyze", "pps", "--db", db, "--trace", "1", "--line", "D7"});
  ASSERT_EQ(mapped.exit_code, 0) << mapped.output;
  const double start_of[] = {0, 0.3, 0.6};  // by trace id
  constexpr double kBoundNs = 1000;

  // Without a mapping: refused with durations' message, and no report file left behind.
  const std::string html = (dir / "r.html").string();
  const std::vector<std::vector<std::string>> unmapped = {
      {"analyze", "intervals", "--trace", "2", "--tau-ns", "200000000", "--time", "utc"},
      {"analyze", "align", "--traces", "2,1", "--sync", "2", "--time", "utc", "--format", "csv"},
      {"query", "window", "0", "1000000000", "--trace", "2", "--time", "utc"},
      {"query", "window", "2026-11-23T16:00:01Z", "2026-11-23T16:00:02Z", "--trace", "2"},
      {"report", "-o", html, "--trace", "2", "--time", "utc"}};
  for (std::vector<std::string> args : unmapped) {
    args.insert(args.end(), {"--db", db});
    auto run = test::run_ett(args);
    EXPECT_EQ(run.exit_code, 1) << args[1] << ": " << run.output;
    EXPECT_NE(run.output.find("has no UTC mapping: run `ett analyze pps --trace 2` first"), std::string::npos)
        << args[1] << ": " << run.output;
  }
  EXPECT_FALSE(std::filesystem::exists(html));

  // intervals: each probe's first and last event, and the close pairs (a pulse's rise and its fall 0.1 s on).
  auto intervals = test::run_ett({"analyze", "intervals", "--db", db, "--trace", "1", "--tau-ns", "200000000",
                                  "--time", "utc", "--format", "json"});
  ASSERT_EQ(intervals.exit_code, 0) << intervals.output;
  const nlohmann::json gaps = nlohmann::json::parse(intervals.output);
  EXPECT_EQ(gaps["time"], "utc");
  ASSERT_EQ(gaps["probes"].size(), 2u) << intervals.output;
  const nlohmann::json& counter = gaps["probes"][0];  // probe 1: a change 0.5 s after each of 20 pulses
  EXPECT_NEAR(ns_after_cmos(counter["first_utc"]), 1.5e9, kBoundNs);
  EXPECT_NEAR(ns_after_cmos(counter["last_utc"]), 20.5e9, kBoundNs);
  const nlohmann::json& pps = gaps["probes"][1];
  EXPECT_NEAR(ns_after_cmos(pps["first_utc"]), 1e9, kBoundNs);
  EXPECT_NEAR(ns_after_cmos(pps["last_utc"]), 20.1e9, kBoundNs);
  ASSERT_EQ(pps["closer_than_tau"].size(), 20u) << intervals.output;
  for (size_t k = 0; k < 20; ++k) {
    const nlohmann::json& pair = pps["closer_than_tau"][k];
    EXPECT_NEAR(ns_after_cmos(pair["previous_time_utc"]), (1.0 + static_cast<double>(k)) * 1e9, kBoundNs);
    EXPECT_NEAR(ns_after_cmos(pair["time_utc"]), (1.1 + static_cast<double>(k)) * 1e9, kBoundNs);
  }
  auto intervals_csv = test::run_ett({"analyze", "intervals", "--db", db, "--trace", "1", "--tau-ns",
                                      "200000000", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(intervals_csv.exit_code, 0) << intervals_csv.output;
  const auto probe_rows = csv_rows(intervals_csv.output);
  ASSERT_EQ(probe_rows.size(), 2u) << intervals_csv.output;
  EXPECT_EQ(probe_rows[0].at("probe"), "1");
  EXPECT_NEAR(ns_after_cmos(probe_rows[0].at("first_utc")), 1.5e9, kBoundNs);
  EXPECT_NEAR(ns_after_cmos(probe_rows[1].at("last_utc")), 20.1e9, kBoundNs);
  auto intervals_text = test::run_ett(
      {"analyze", "intervals", "--db", db, "--trace", "1", "--tau-ns", "200000000", "--time", "utc"});
  ASSERT_EQ(intervals_text.exit_code, 0) << intervals_text.output;
  EXPECT_NE(intervals_text.output.find("UTC (PPS mapping, labelled from cmos)"), std::string::npos)
      << intervals_text.output;

  // align --sync 2 (the PPS line is the shared wire): every event's UTC through the reference's mapping.
  auto align_csv = test::run_ett(
      {"analyze", "align", "--db", db, "--traces", "1,2", "--sync", "2", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(align_csv.exit_code, 0) << align_csv.output;
  const auto merged = csv_rows(align_csv.output);
  ASSERT_EQ(merged.size(), 2 * SyntheticPps{}.make().events.size());
  for (const auto& row : merged)
    EXPECT_NEAR(ns_after_cmos(row.at("time_utc")),
                true_ns_after_cmos(std::stod(row.at("time_ns")), start_of[std::stoi(row.at("trace_id"))]),
                kBoundNs)
        << row.at("trace_id") << " " << row.at("seq");
  auto align_json = test::run_ett({"analyze", "align", "--db", db, "--traces", "1,2", "--sync", "2", "--time",
                                   "utc", "--format", "json"});
  ASSERT_EQ(align_json.exit_code, 0) << align_json.output;
  const nlohmann::json aligned = nlohmann::json::parse(align_json.output);
  EXPECT_EQ(aligned["time"], "utc");
  ASSERT_EQ(aligned["timeline"].size(), merged.size());
  for (size_t i = 0; i < merged.size(); ++i)
    EXPECT_EQ(aligned["timeline"][i]["time_utc"], merged[i].at("time_utc")) << i;
  auto align_text =
      test::run_ett({"analyze", "align", "--db", db, "--traces", "1,2", "--sync", "2", "--time", "utc"});
  ASSERT_EQ(align_text.exit_code, 0) << align_text.output;
  const size_t origin = align_text.output.find("time 0 of the reference is ");
  ASSERT_NE(origin, std::string::npos) << align_text.output;
  EXPECT_NEAR(ns_after_cmos(align_text.output.substr(origin + 27, kIsoUtcLength)), 0.3e9, kBoundNs);
  // Without --time utc the timeline has no UTC.
  auto align_ns =
      test::run_ett({"analyze", "align", "--db", db, "--traces", "1,2", "--sync", "2", "--format", "json"});
  ASSERT_EQ(align_ns.exit_code, 0) << align_ns.output;
  EXPECT_FALSE(nlohmann::json::parse(align_ns.output)["timeline"][0].contains("time_utc"));

  // Queries: the events' UTC from their TSC, and window's bounds in UTC.
  auto window = test::run_ett({"query", "window", "2026-11-23T16:00:01.4Z", "2026-11-23T16:00:01.6Z", "--db",
                               db, "--trace", "1", "--time", "utc", "--format", "json"});
  ASSERT_EQ(window.exit_code, 0) << window.output;
  const nlohmann::json in_window = nlohmann::json::parse(window.output);
  ASSERT_EQ(in_window.size(), 1u) << window.output;  // probe 1's change at 16:00:01.5, no pulse edge
  EXPECT_EQ(in_window[0]["probe"], 1);
  EXPECT_NEAR(ns_after_cmos(in_window[0]["time_utc"]), 1.5e9, kBoundNs);
  const std::string at_ns = std::to_string(in_window[0]["time_ns"].get<int64_t>());
  auto by_ns =
      test::run_ett({"query", "window", at_ns, at_ns, "--db", db, "--trace", "1", "--format", "json"});
  ASSERT_EQ(by_ns.exit_code, 0) << by_ns.output;
  EXPECT_EQ(nlohmann::json::parse(by_ns.output)[0]["seq"], in_window[0]["seq"]);
  auto probe =
      test::run_ett({"query", "probe", "1", "--db", db, "--trace", "1", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  EXPECT_TRUE(probe.output.starts_with("seq,probe,code,tsc,time_ns,time_utc\n")) << probe.output;
  const auto counted = csv_rows(probe.output);
  ASSERT_EQ(counted.size(), 20u);
  for (size_t k = 0; k < counted.size(); ++k)
    EXPECT_NEAR(ns_after_cmos(counted[k].at("time_utc")), (1.5 + static_cast<double>(k)) * 1e9, kBoundNs);
  auto event =
      test::run_ett({"query", "event", "0", "--db", db, "--trace", "1", "--time", "utc", "--format", "json"});
  ASSERT_EQ(event.exit_code, 0) << event.output;
  EXPECT_NEAR(ns_after_cmos(nlohmann::json::parse(event.output)[0]["time_utc"]), 1e9, kBoundNs);
  for (const char* timeless : {"codes", "probes", "traces"}) {
    auto run = test::run_ett({"query", timeless, "--db", db, "--trace", "1", "--time", "utc"});
    EXPECT_EQ(run.exit_code, 1) << timeless << ": " << run.output;
    EXPECT_NE(run.output.find("lists no events"), std::string::npos) << run.output;
  }
  auto bad_bound = test::run_ett({"query", "window", "2026-11-23T16:00:01.1234567891Z",
                                  "2026-11-23T16:00:02Z", "--db", db, "--trace", "1"});
  EXPECT_EQ(bad_bound.exit_code, 1) << bad_bound.output;
  EXPECT_NE(bad_bound.output.find("at most 9 digits"), std::string::npos) << bad_bound.output;

  // report: the UTC of time 0 in the summary and the axes' origin in the page's data.
  auto page = test::run_ett({"report", "-o", html, "--db", db, "--trace", "1", "--time", "utc"});
  ASSERT_EQ(page.exit_code, 0) << page.output;
  const std::string report = test::slurp(html);
  EXPECT_NE(report.find("UTC of time 0"), std::string::npos);
  const nlohmann::json data = page_data(report);
  ASSERT_TRUE(data.contains("utc")) << data.dump().substr(0, 300);
  EXPECT_NEAR(ns_after_cmos(data["utc"]["time0"]), 0.3e9, kBoundNs);
  EXPECT_EQ(data["utc"]["second"], kCmos);
  EXPECT_NEAR(data["utc"]["ns"].get<double>(), 0.3e9, kBoundNs);
  EXPECT_NEAR(data["utc"]["scale"].get<double>(), 1 + 30e-6, 1e-9);
  auto plain = test::run_ett({"report", "-o", html, "--force", "--db", db, "--trace", "1"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(page_data(test::slurp(html)).contains("utc"));

  // align --pps: both mapped now; time_utc is each event's own mapping's, as true as --sync's.
  ASSERT_EQ(test::run_ett({"analyze", "pps", "--db", db, "--trace", "2", "--line", "D7"}).exit_code, 0);
  auto pps_csv = test::run_ett(
      {"analyze", "align", "--db", db, "--traces", "1,2", "--pps", "--time", "utc", "--format", "csv"});
  ASSERT_EQ(pps_csv.exit_code, 0) << pps_csv.output;
  const auto through_pps = csv_rows(pps_csv.output);
  ASSERT_EQ(through_pps.size(), merged.size());
  for (const auto& row : through_pps)
    EXPECT_NEAR(ns_after_cmos(row.at("time_utc")),
                true_ns_after_cmos(std::stod(row.at("time_ns")), start_of[std::stoi(row.at("trace_id"))]),
                kBoundNs)
        << row.at("trace_id") << " " << row.at("seq");
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

// Two captures of the same PPS that started 0.3 s apart: align --pps puts the second 0.3 s (of the
// reference's clock) after the first, with slope 1, and the pulses of the same seconds agree to their jitter.
TEST(Pps, AlignThroughUtcMappingsFindsTheTrueOffset) {
  SyntheticPps early, late;
  early.start_fraction = 0.3;
  late.start_fraction = 0.6;
  late.seed = 2;
  std::vector<Capture> captures = {early.make(), late.make()};
  std::vector<PpsResult> mappings;
  for (Capture& capture : captures) {
    for (AnalysisEvent& event : capture.events)
      event.time_ns = static_cast<double>(event.tsc - capture.info.capture_start_tsc) * 1e9 /
                      static_cast<double>(capture.info.tsc_hz);
    auto mapping = analyze_pps(capture, options_for(capture));
    ASSERT_TRUE(mapping) << mapping.error().message;
    ASSERT_EQ(mapping->label_source, "cmos");
    mappings.push_back(*mapping);
  }
  auto aligned = align_by_pps(captures, mappings);
  ASSERT_TRUE(aligned) << aligned.error().message;
  ASSERT_EQ(aligned->maps.size(), 2u);
  const double header_hz = static_cast<double>(captures[0].info.tsc_hz);
  EXPECT_NEAR(aligned->maps[1].offset_ns, 0.3e9 * kTrueHz / header_hz, 100);
  EXPECT_NEAR(aligned->maps[1].slope, 1, 1e-8);
  EXPECT_GE(aligned->maps[1].seconds, 19u);
  EXPECT_LT(aligned->maps[1].max_abs_ns, 100);  // two receivers' 10 ns jitter
  EXPECT_EQ(aligned->timeline.size(), captures[0].events.size() + captures[1].events.size());
  // The same physical instant (pulse k of both) gets the same UTC from either capture.
  auto reference_ns = [&](const MergedRef& merged) {
    const PpsClockMap& map = aligned->maps[merged.capture];
    return map.offset_ns + map.slope * captures[merged.capture].events[merged.event].time_ns;
  };
  const std::vector<MergedRef> timeline = aligned->timeline.refs();
  for (size_t i = 1; i < timeline.size(); ++i)
    EXPECT_LE(reference_ns(timeline[i - 1]), reference_ns(timeline[i]));
  const std::vector<int64_t> ids{1, 2};
  const std::string csv = format_pps_align(*aligned, captures, mappings, ids, OutputFormat::Csv);
  EXPECT_NE(csv.find("trace_id,seq,probe,code,lines,time_ns,ref_time_ns,time_utc\n"), std::string::npos);
  // Pulse 1 of both: the same UTC second within the two receivers' jitter.
  EXPECT_NE(csv.find("\n1,0,2,8,128,"), std::string::npos) << csv.substr(0, 400);
  EXPECT_NE(csv.find(",2026-11-23T16:00:00.99999"), std::string::npos) << csv.substr(0, 400);
  const std::string json = format_pps_align(*aligned, captures, mappings, ids, OutputFormat::Json);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc.at("method"), "pps");
  ASSERT_EQ(doc.at("traces").size(), 2u) << json;
  EXPECT_EQ(doc["traces"][1].at("trace_id"), 2);
  EXPECT_GE(doc["traces"][1].at("seconds").get<int>(), 1) << json;
  EXPECT_GE(doc["traces"][1].at("disagreement_p99_ns").get<double>(), 0) << json;

  mappings[1].utc_second.reset();
  auto unlabelled = align_by_pps(captures, mappings);
  ASSERT_FALSE(unlabelled);
  EXPECT_NE(unlabelled.error().message.find("ett analyze pps"), std::string::npos);
}

TEST(Pps, CaptureTimesGetTheirUtc) {
  const Capture capture = SyntheticPps{}.make();
  auto mapping = analyze_pps(capture, options_for(capture));
  ASSERT_TRUE(mapping) << mapping.error().message;
  // 0.7 s after the start (started 0.3 s into the CMOS second): the first pulse, 16:00:01.
  const double time_ns = 0.7e9 * kTrueHz / static_cast<double>(capture.info.tsc_hz);
  const UtcNs utc = mapping->utc_of_capture_ns(time_ns, capture.info.capture_start_tsc, capture.info.tsc_hz);
  const int64_t from_pulse_ns =
      (utc.second - static_cast<int64_t>(kCmos) - 1) * 1'000'000'000 + utc.nanosecond;
  EXPECT_LT(std::abs(from_pulse_ns), 100) << format_iso_utc(utc);  // the pulses' jitter
  EXPECT_EQ(format_iso_utc(UtcNs{static_cast<int64_t>(kCmos), 123}), "2026-11-23T16:00:00.000000123Z");
}

}  // namespace
}  // namespace ett::host
