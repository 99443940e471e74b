// export_command_test.cpp: `ett export` through the real binary on a loaded synthetic trace: `ett label`
// names in the VCD and Perfetto tracks, the VCD's code vectors and --timescale, Perfetto's protobuf trace
// decoded by protoc against export/perfetto_trace.proto with its event count round-tripped, and --time utc
// from a stored PPS mapping (refused, naming `ett analyze pps`, when there is none).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/durations.h"
#include "analysis/input.h"
#include "common/tsc_time.h"
#include "db/schema.h"
#include "export/perfetto.h"
#include "export/vcd.h"
#include "golden/golden_cases.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

using nlohmann::json;

size_t count_of(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++count;
  return count;
}

// One message on standard error in the ett: style, naming the problem; nothing on standard output.
void expect_one_line_error(const golden::Run& run, const std::string& words) {
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.err.rfind("ett: ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

class ExportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    m_db = "sqlite:" + m_dir.file("t.db");
    ASSERT_EQ(golden::ett({"synth", m_dir.file("t.img"), "--events", "3000", "--seed", "5"}).status, 0);
    const golden::Run load = golden::ett({"load", m_dir.file("t.img"), "--db", m_db});
    ASSERT_EQ(load.status, 0) << load.err;
    const golden::Run label = ett({"label", "--probe", "1", "node A"});
    ASSERT_EQ(label.status, 0) << label.err;
  }

  golden::Run ett(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(m_db);
    return golden::ett(args);
  }
  // One number from `ett sql`.
  long long sql_number(const std::string& query) {
    const golden::Run run = ett({"sql", "--format", "csv", query});
    EXPECT_EQ(run.status, 0) << run.err;
    return std::atoll(run.out.substr(run.out.find('\n') + 1).c_str());
  }

  TempDir m_dir;
  std::string m_db;
};

TEST_F(ExportCommand, LabelsNameTheVcdSignalsAndThePerfettoTracks) {
  const golden::Run vcd = ett({"export", "--format", "vcd"});
  ASSERT_EQ(vcd.status, 0) << vcd.err;
  EXPECT_NE(vcd.out.find("$var wire 1 ) node_A $end\n$var wire 1 * probe2 $end\n"), std::string::npos)
      << vcd.out;
  EXPECT_NE(vcd.out.find("$var wire 1 4 node_A_code[3] $end\n"), std::string::npos);
  EXPECT_NE(vcd.out.find("$var wire 1 5 probe2_code[0] $end\n$upscope $end\n"), std::string::npos);

  const golden::Run perfetto = ett({"export", "--format", "perfetto"});
  ASSERT_EQ(perfetto.status, 0) << perfetto.err;
  const json trace = json::parse(perfetto.out);
  const long long events = sql_number("SELECT count(*) FROM events");
  ASSERT_GT(events, 0);
  std::map<std::string, int> threads;
  long long instants = 0, counters = 0, node_a_counters = 0;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") threads[event["args"]["name"]] = event["tid"];
    if (event["ph"] == "i") ++instants;
    if (event["ph"] == "C") {
      ++counters;
      EXPECT_TRUE(event["args"]["code"].is_number_unsigned());
      if (event["name"] == "node A") ++node_a_counters;
    }
  }
  EXPECT_EQ(threads, (std::map<std::string, int>{{"node A", 1}, {"probe 2", 2}}));
  EXPECT_EQ(instants, events);
  EXPECT_EQ(counters, events);
  EXPECT_EQ(node_a_counters, sql_number("SELECT count(*) FROM events WHERE probe = 1"));
}

TEST_F(ExportCommand, TimescaleIsCheckedAndWritten) {
  const golden::Run us = ett({"export", "--format", "vcd", "--timescale", "1us"});
  ASSERT_EQ(us.status, 0) << us.err;
  EXPECT_NE(us.out.find("$timescale 1 us $end\n"), std::string::npos);
  const golden::Run ns = ett({"export", "--format", "vcd"});
  EXPECT_NE(ns.out.find("$timescale 1 ns $end\n"), std::string::npos);
  EXPECT_LT(us.out.size(), ns.out.size());  // polls within a microsecond are merged
  const golden::Run no_bus = ett({"export", "--format", "vcd", "--no-bus"});
  EXPECT_NE(ns.out.find("_code["), std::string::npos);
  EXPECT_EQ(no_bus.out.find("_code"), std::string::npos);

  const std::string file = m_dir.file("bad.vcd");
  expect_one_line_error(ett({"export", "--format", "vcd", "--timescale", "3ns", "-o", file}),
                        "--timescale '3ns': expected 1, 10 or 100 of s, ms, us, ns or ps");
  EXPECT_FALSE(std::filesystem::exists(file));
  expect_one_line_error(ett({"export", "--format", "csv", "--timescale", "1ns"}),
                        "--timescale and --no-bus apply to --format vcd");
  expect_one_line_error(ett({"export", "--format", "csv", "--time", "gps"}), "--time 'gps'");
}

// The protobuf trace decodes against the schema in the repository, and holds one instant and one counter
// value per event in the database, one slice per action, and a track per probe named by its label.
TEST_F(ExportCommand, PerfettoProtobufDecodesAndRoundTripsTheEventCount) {
  const std::string file = m_dir.file("trace.pftrace");
  const golden::Run written =
      ett({"export", "--format", "perfetto-proto", "--from", "1", "--to", "2", "-o", file});
  ASSERT_EQ(written.status, 0) << written.err;
  const std::string decoded_file = m_dir.file("decoded.txt");
  const std::string command = "protoc --decode=perfetto.protos.Trace --proto_path=" ETT_SOURCE_DIR
                              "/host-tools/export perfetto_trace.proto < " +
                              file + " > " + decoded_file + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(decoded_file);
  const std::string decoded = slurp(decoded_file);
  const long long events = sql_number("SELECT count(*) FROM events");
  const golden::Run durations = ett({"analyze", "durations", "--from", "1", "--to", "2", "--format", "json"});
  ASSERT_EQ(durations.status, 0) << durations.err;
  const size_t actions = json::parse(durations.out)["actions"].size();
  ASSERT_GT(actions, 0u);
  EXPECT_EQ(count_of(decoded, "track_event {"), static_cast<size_t>(events) + 2 * actions);
  EXPECT_EQ(count_of(decoded, "type: TYPE_INSTANT"), static_cast<size_t>(events));
  // Each instant sets its probe's counter track: a counter uuid (0x201, 0x202) and the code.
  EXPECT_EQ(count_of(decoded, "extra_counter_values: "), static_cast<size_t>(events));
  EXPECT_EQ(count_of(decoded, "extra_counter_track_uuids: 513\n"),
            static_cast<size_t>(sql_number("SELECT count(*) FROM events WHERE probe = 1")));
  EXPECT_EQ(count_of(decoded, "type: TYPE_SLICE_BEGIN"), actions);
  EXPECT_EQ(count_of(decoded, "type: TYPE_SLICE_END"), actions);
  for (const char* track :
       {"name: \"node A\"", "name: \"node A code\"", "name: \"probe 2\"", "name: \"actions\""})
    EXPECT_NE(decoded.find(track), std::string::npos) << track;
  // Interning as Perfetto requires: the first packet clears the sequence's state, the events need it.
  EXPECT_LT(decoded.find("sequence_flags: 1"), decoded.find("sequence_flags: 2"));
  EXPECT_EQ(count_of(decoded, "sequence_flags: 1\n"), 1u);
  EXPECT_EQ(count_of(decoded, "trusted_packet_sequence_id: 1\n"), count_of(decoded, "packet {"));

  // Without actions: exactly one TrackEvent packet per event of the database.
  const std::string plain = m_dir.file("plain.pftrace");
  ASSERT_EQ(ett({"export", "--format", "perfetto-proto", "-o", plain}).status, 0);
  ASSERT_EQ(std::system(("protoc --decode=perfetto.protos.Trace --proto_path=" ETT_SOURCE_DIR
                         "/host-tools/export perfetto_trace.proto < " +
                         plain + " > " + decoded_file)
                            .c_str()),
            0);
  EXPECT_EQ(count_of(slurp(decoded_file), "track_event {"), static_cast<size_t>(events));

  // The check has teeth: a file cut in the middle of a packet does not decode.
  const std::string cut = m_dir.file("cut.pftrace");
  std::ofstream(cut, std::ios::binary) << slurp(file).substr(0, slurp(file).size() - 5);
  EXPECT_NE(std::system(("protoc --decode=perfetto.protos.Trace --proto_path=" ETT_SOURCE_DIR
                         "/host-tools/export perfetto_trace.proto < " +
                         cut + " > /dev/null 2>&1")
                            .c_str()),
            0);
}

// Unix ns of a TSC under the mapping, as independent arithmetic (long double).
long long expected_unix_ns(long double tsc, long double anchor, long double hz, long long second) {
  return second * 1'000'000'000LL + std::llround(static_cast<double>((tsc - anchor) / hz * 1e9L));
}

// "2026-11-23T00:00:01.123456789Z" to Unix ns; -1 when it is not that form.
long long parse_iso_ns(const std::string& text) {
  tm parts{};
  long long ns = -1;
  char zone = 0;
  if (text.size() != 30 ||
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%9lld%c", &parts.tm_year, &parts.tm_mon,
                  &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &ns, &zone) != 8 ||
      zone != 'Z')
    return -1;
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<long long>(timegm(&parts)) * 1'000'000'000LL + ns;
}

std::vector<std::string> fields(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

// A 300,000-event synthetic trace (two parts for a streamed read of its rows) loaded into `db`, probe 2
// labelled "node B".
void load_labelled_trace(const TempDir& dir, const std::string& db, const char* seed) {
  ASSERT_EQ(golden::ett({"synth", dir.file("big.img"), "--events", "300000", "--seed", seed}).status, 0);
  const golden::Run load = golden::ett({"load", dir.file("big.img"), "--db", db});
  ASSERT_EQ(load.status, 0) << load.err;
  ASSERT_EQ(golden::ett({"label", "--probe", "2", "node B", "--db", db}).status, 0);
}

// `ett export --format perfetto` (and perfetto-proto) streams the trace (from its event_packs) and pairs the
// actions as the events pass: the file is what the exporter writes from the whole capture in memory and its
// actions paired there, with and without actions, by either rule.
TEST(ExportStreamed, PerfettoOfAStreamedTraceIsWhatTheLoadedTraceGives) {
  TempDir dir;
  const std::string db = "sqlite:" + dir.file("big.db");
  load_labelled_trace(dir, db, "9");
  auto loaded = host::open_trace(db, std::nullopt);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const host::Capture& capture = loaded->capture;
  const std::vector<std::string> labels = {"", "node B"};
  for (const char* format : {"perfetto", "perfetto-proto"})
    for (const char* pair : {"", "same-code", "fifo"}) {
      SCOPED_TRACE(fmt::format("{} {}", format, pair));
      const std::string file = dir.file(fmt::format("out-{}-{}", format, pair));
      std::vector<std::string> args = {"export", "--format", format, "-o", file, "--db", db};
      std::vector<host::Action> paired;
      if (*pair) {
        args.insert(args.end(), {"--from", "1", "--to", "2", "--pair", pair});
        auto result = host::pair_actions(capture.events, {1, {}}, {2, {}}, 0, *host::parse_pair_rule(pair),
                                         host::Summarize::No);
        ASSERT_TRUE(result) << result.error().message;
        paired = std::move(result->actions);
        ASSERT_GT(paired.size(), 10'000u);
      }
      const golden::Run exported = golden::ett(args);
      ASSERT_EQ(exported.status, 0) << exported.err;
      const host::ActionList actions(paired);
      const std::string expected = std::string_view(format) == "perfetto"
                                       ? host::export_perfetto(capture, actions, {labels, nullptr})
                                       : host::export_perfetto_proto(capture, actions, {labels, nullptr});
      const std::string written = slurp(file);
      EXPECT_EQ(written.size(), expected.size());
      EXPECT_TRUE(written == expected);
    }
}

// `ett export --format vcd` streams the trace too: the file is what write_vcd gives for the whole capture in
// memory, at a fine and a merging timescale, with and without the vectors, and with an event moved before the
// capture start (the origin comes from event_blocks before the read, as the protobuf's does).
TEST(ExportStreamed, VcdOfATraceReadInTwoPartsIsWhatTheLoadedTraceGives) {
  TempDir dir;
  const std::string db = "sqlite:" + dir.file("big.db");
  load_labelled_trace(dir, db, "10");
  const std::vector<std::string> labels = {"", "node B"};
  auto compare = [&](const std::string& name) {
    auto loaded = host::open_trace(db, std::nullopt);
    ASSERT_TRUE(loaded) << loaded.error().message;
    for (const char* timescale : {"1ns", "10us"})
      for (const bool bus : {true, false}) {
        SCOPED_TRACE(fmt::format("{}, {}, bus {}", name, timescale, bus));
        const std::string file = dir.file(fmt::format("{}-{}-{}.vcd", name, timescale, bus));
        std::vector<std::string> args = {"export", "--format", "vcd", "--timescale", timescale, "-o",
                                         file,     "--db",     db};
        if (!bus) args.push_back("--no-bus");
        const golden::Run exported = golden::ett(args);
        ASSERT_EQ(exported.status, 0) << exported.err;
        const std::string expected =
            host::export_vcd(loaded->capture, {*host::parse_vcd_timescale(timescale), bus, labels, nullptr});
        const std::string written = slurp(file);
        EXPECT_EQ(written.size(), expected.size());
        EXPECT_TRUE(written == expected);
      }
  };
  compare("as loaded");  // from its event_packs
  // From its events rows, read as two halves at once (the packs deleted).
  ASSERT_EQ(golden::ett({"sql", "--write", "DELETE FROM event_packs", "--db", db}).status, 0);
  compare("from its rows");
  auto head = host::open_trace(db, std::nullopt);
  ASSERT_TRUE(head) << head.error().message;
  const host::CaptureInfo info = head->capture.info;
  // Written behind ett's back, the tallies set by hand (`ett sql --write` would count them from the rows).
  auto moved = (*host::open_database(db))
                   ->run_script(fmt::format(
                       "UPDATE events SET tsc = {0} WHERE seq = 150001; UPDATE event_blocks SET min_ns = {1} "
                       "WHERE first_seq = {2}; DELETE FROM event_packs",
                       info.capture_start_tsc - 555'555, host::ticks_to_ns_exact(-555'555, info.tsc_hz),
                       (150001 >> 12) << 12));
  ASSERT_TRUE(moved) << moved.error().message;
  compare("an event before the start");
}

// The protobuf's times start at the trace's earliest event when it comes before the capture start, which the
// streamed export finds before it reads the trace: from event_blocks (here an event in a middle block, its
// TSC set before the start, its block's least time with it), from all the events when that table has no rows,
// or from the loader's time_ns without a TSC rate. A table that does not match the events is named.
TEST(ExportStreamed, PerfettoProtoStartsAtTheEarliestEventWhereverItIs) {
  TempDir dir;
  const std::string db = "sqlite:" + dir.file("t.db");
  ASSERT_EQ(golden::ett({"synth", dir.file("t.img"), "--events", "30000", "--seed", "4"}).status, 0);
  ASSERT_EQ(golden::ett({"load", dir.file("t.img"), "--db", db}).status, 0);
  // Written behind ett's back (`ett sql --write` would count the tallies from the rows again).
  auto sql = [&db](const std::string& statement) {
    auto ran = (*host::open_database(db))->run_script(statement);
    ASSERT_TRUE(ran) << statement << ": " << ran.error().message;
  };
  auto head = host::open_trace(db, std::nullopt);
  ASSERT_TRUE(head) << head.error().message;
  const host::CaptureInfo info = head->capture.info;
  const uint64_t early_tsc = info.capture_start_tsc - 777'777;
  const int64_t early_ns = host::ticks_to_ns_exact(-777'777, info.tsc_hz);
  // Events changed by hand: their packs go (what docs/design/database.md says to do), and the trace is read
  // from its rows.
  sql(fmt::format("UPDATE events SET tsc = {} WHERE seq = 20000; DELETE FROM event_packs", early_tsc));
  sql(fmt::format("UPDATE event_blocks SET min_ns = {} WHERE first_seq = {}", early_ns, (20000 >> 12) << 12));

  auto export_matches = [&](const std::string& name) {
    SCOPED_TRACE(name);
    auto loaded = host::open_trace(db, std::nullopt);
    ASSERT_TRUE(loaded) << loaded.error().message;
    auto earliest = host::earliest_event_ns(*loaded->db, loaded->capture.info);
    ASSERT_TRUE(earliest) << earliest.error().message;
    double least = loaded->capture.events.front().time_ns;
    for (const host::AnalysisEvent& event : loaded->capture.events) least = std::min(least, event.time_ns);
    EXPECT_EQ(*earliest, least);
    EXPECT_LT(least, 0);
    const std::string file = dir.file(name + ".pftrace");
    const golden::Run exported =
        golden::ett({"export", "--format", "perfetto-proto", "-o", file, "--db", db});
    ASSERT_EQ(exported.status, 0) << exported.err;
    EXPECT_TRUE(slurp(file) == host::export_perfetto_proto(loaded->capture, {}, {}));
  };
  export_matches("middle block");

  // Another event moved earlier still without its block: named, and no file is left.
  sql(fmt::format("UPDATE events SET tsc = {} WHERE seq = 25000", early_tsc - 1000));
  const std::string stale = dir.file("stale.pftrace");
  const golden::Run refused = golden::ett({"export", "--format", "perfetto-proto", "-o", stale, "--db", db});
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("event seq 25000"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("event_blocks"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(stale));

  sql("DELETE FROM event_blocks");
  export_matches("no blocks");
  sql("UPDATE traces SET tsc_hz = 0");
  sql("UPDATE events SET time_ns = -5000 WHERE seq = 7");
  export_matches("no TSC rate");
}

TEST_F(ExportCommand, UtcTimesComeFromThePpsMappingAndItsAbsenceIsNamed) {
  for (const char* format : {"csv", "vcd", "perfetto", "perfetto-proto"})
    expect_one_line_error(ett({"export", "--format", format, "--time", "utc"}), "ett analyze pps");

  // The mapping `ett analyze pps` would store: pulse 0 one second after the capture start, 20 ppm slow.
  const long long start = sql_number("SELECT capture_start_tsc FROM traces");
  const long long hz = sql_number("SELECT tsc_hz FROM traces");
  const long long second = 1'795'392'000;  // 2026-11-23T00:00:00Z
  const long double anchor = start + hz, rate = hz * (1 - 20e-6L);
  ASSERT_EQ(ett({"sql", "--write",
                 host::pps_table_sql(host::DbEngine::Sqlite) + ";\n" +
                     fmt::format(
                         "INSERT INTO pps_mapping (trace_id, line, tsc_hz, uncertainty_ppb, anchor_tsc, "
                         "utc_second, label_source, pulses, rejected, jitter_p99_ns) VALUES (1, 7, {:.17g}, "
                         "0.5, {:.17g}, {}, 'user', 10, 0, 12)",
                         static_cast<double>(rate), static_cast<double>(anchor), second)})
                .status,
            0);

  const golden::Run csv = ett({"export", "--format", "csv", "--time", "utc"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  std::istringstream rows(csv.out);
  std::string row;
  std::getline(rows, row);
  EXPECT_EQ(row, "seq,probe,code,tsc,time_ns,lines,time_utc");
  int checked = 0;
  while (std::getline(rows, row) && checked < 50) {
    const std::vector<std::string> f = fields(row);
    ASSERT_EQ(f.size(), 7u) << row;
    const long long truth = expected_unix_ns(std::stold(f[3]), anchor, rate, second);
    EXPECT_NEAR(static_cast<double>(parse_iso_ns(f[6]) - truth), 0.0, 1.0) << row;
    ++checked;
  }
  EXPECT_EQ(checked, 50);

  const golden::Run vcd = ett({"export", "--format", "vcd", "--time", "utc"});
  ASSERT_EQ(vcd.status, 0) << vcd.err;
  const size_t date = vcd.out.find("$date ");
  ASSERT_EQ(date, 0u) << vcd.out.substr(0, 200);
  EXPECT_NEAR(static_cast<double>(parse_iso_ns(vcd.out.substr(6, 30)) -
                                  expected_unix_ns(start, anchor, rate, second)),
              0.0, 1.0)
      << vcd.out.substr(0, 200);

  const golden::Run perfetto = ett({"export", "--format", "perfetto", "--time", "utc"});
  ASSERT_EQ(perfetto.status, 0) << perfetto.err;
  EXPECT_TRUE(json::accept(perfetto.out));  // still JSON
  // The first instant's "ts": µs since 1970 with ns decimals, written from integers (a double would keep only
  // a quarter of a µs).
  const size_t instant = perfetto.out.find("{\"ph\":\"i\"");
  ASSERT_NE(instant, std::string::npos);
  const size_t ts = perfetto.out.find("\"ts\":", instant) + 5;
  const std::string stamp = perfetto.out.substr(ts, perfetto.out.find(',', ts) - ts);
  ASSERT_EQ(stamp.size() - stamp.find('.'), 4u) << stamp;
  const long long ns = std::atoll(stamp.substr(0, stamp.find('.')).c_str()) * 1000 +
                       std::atoll(stamp.c_str() + stamp.find('.') + 1);
  const size_t tsc_at = perfetto.out.find("\"tsc\":", instant) + 6;
  const long double tsc = std::stold(perfetto.out.substr(tsc_at, perfetto.out.find('}', tsc_at) - tsc_at));
  EXPECT_NEAR(static_cast<double>(ns - expected_unix_ns(tsc, anchor, rate, second)), 0.0, 1.0) << stamp;
}

}  // namespace
}  // namespace ett::test
