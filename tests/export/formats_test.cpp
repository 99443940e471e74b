// formats_test.cpp: the VCD, Perfetto JSON and CSV exporters' output, checked as text (the HTML report:
// html_test).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>

#include "ett/trace_format.h"
#include "export/csv.h"
#include "export/perfetto.h"
#include "export/vcd.h"
#include "support/streamed_events.h"

using namespace ett::host;

namespace {

// At 1 GHz from TSC 1000: two probes changing in one poll at 100 ns, two polls that round to the same ns
// (250.3 and 250.4), a change at 500 ns and the end at 2000 ns.
Capture small_capture() {
  Capture capture;
  capture.info.name = "trace 1";
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.capture_start_tsc = 1000;
  capture.info.capture_end_tsc = 3000;
  capture.events = {
      {0, 1, 1, 0x01, 1100, 100},   {1, 2, 2, 0x21, 1100, 100}, {2, 1, 0, 0x20, 1250, 250.3},
      {3, 1, 1, 0x21, 1251, 250.4}, {4, 2, 0, 0x01, 1500, 500},
  };
  return capture;
}

}  // namespace

TEST(ExportVcd, WritesWiresPerLineAndProbeWithStrictlyIncreasingTimes) {
  VcdOptions options;
  options.bus = false;
  const std::string vcd = export_vcd(small_capture(), options);
  const size_t body = vcd.find("$timescale");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(vcd.substr(body),
            "$timescale 1 ns $end\n$scope module ett $end\n"
            "$var wire 1 ! D0 $end\n$var wire 1 \" D1 $end\n$var wire 1 # D2 $end\n$var wire 1 $ D3 $end\n"
            "$var wire 1 % D4 $end\n$var wire 1 & D5 $end\n$var wire 1 ' D6 $end\n$var wire 1 ( D7 $end\n"
            "$var wire 1 ) probe1 $end\n$var wire 1 * probe2 $end\n$upscope $end\n$enddefinitions $end\n"
            "#0\n$dumpvars\n0!\n0\"\n0#\n0$\n0%\n0&\n0'\n0(\n0)\n0*\n$end\n"
            "#100\n1!\n1&\n1)\n1*\n"
            "#250\n0!\n0)\n"
            "#251\n1!\n1)\n"
            "#500\n0&\n0*\n"
            "#2000\n");
}

// A serial port's session: its four inputs by name, no D4..D7; a pulse shorter than the poll step (both
// edges at one read, their times unknown) draws no width: the line shows no change at that read.
TEST(ExportVcd, SerialPortLinesByNameAndNoWidthForAShortPulse) {
  Capture capture;
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.capture_start_tsc = 1000;
  capture.info.capture_end_tsc = 3000;
  capture.info.probe_source = static_cast<uint32_t>(ett::format::ProbeSource::Uart);
  capture.events = {{0, 1, 1, 0x01, 1100, 100}, {1, 1, 5, 0x05, 1300, 300}, {2, 1, 1, 0x01, 1300, 300}};
  VcdOptions options;
  options.bus = false;
  const std::string vcd = export_vcd(capture, options);
  const size_t body = vcd.find("$scope");
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(vcd.substr(body),
            "$scope module ett $end\n"
            "$var wire 1 ! DCD $end\n$var wire 1 \" DSR $end\n$var wire 1 # CTS $end\n$var wire 1 $ RI $end\n"
            "$var wire 1 ) probe1 $end\n$var wire 1 * probe2 $end\n$upscope $end\n$enddefinitions $end\n"
            "#0\n$dumpvars\n0!\n0\"\n0#\n0$\n0)\n0*\n$end\n"
            "#100\n1!\n1)\n"
            "#300\n"
            "#2000\n");
}

// Each probe's code as 1-bit wires, one per bit of its layout's width (2x4: four), each written when it
// changes, beside the wires; no vector value (libsigrok 0.5 stops at the first). The probes carry their
// labels (one word: the space becomes '_').
TEST(ExportVcd, CodesAsBitWiresAndLabelsAsNames) {
  const std::vector<std::string> labels = {"node A"};
  VcdOptions options;
  options.probe_labels = labels;
  const std::string vcd = export_vcd(small_capture(), options);
  const size_t body = vcd.find("$var wire 1 ) ");
  ASSERT_NE(body, std::string::npos) << vcd;
  EXPECT_EQ(vcd.substr(body),
            "$var wire 1 ) node_A $end\n$var wire 1 * probe2 $end\n"
            "$var wire 1 4 node_A_code[3] $end\n$var wire 1 3 node_A_code[2] $end\n"
            "$var wire 1 2 node_A_code[1] $end\n$var wire 1 1 node_A_code[0] $end\n"
            "$var wire 1 8 probe2_code[3] $end\n$var wire 1 7 probe2_code[2] $end\n"
            "$var wire 1 6 probe2_code[1] $end\n$var wire 1 5 probe2_code[0] $end\n"
            "$upscope $end\n$enddefinitions $end\n"
            "#0\n$dumpvars\n0!\n0\"\n0#\n0$\n0%\n0&\n0'\n0(\n0)\n0*\n04\n03\n02\n01\n08\n07\n06\n05\n$end\n"
            "#100\n1!\n1&\n1)\n1*\n11\n16\n"
            "#250\n0!\n0)\n01\n"
            "#251\n1!\n1)\n11\n"
            "#500\n0&\n0*\n06\n"
            "#2000\n");
  EXPECT_EQ(vcd.find("\nb"), std::string::npos);
}

// A label keeps its UTF-8 characters (GTKWave and sigrok show them as they are); ASCII punctuation, which
// could read as a bit select or a keyword, becomes '_'.
TEST(ExportVcd, UnicodeLabelsKeepTheirCharacters) {
  const std::vector<std::string> labels = {"Kühlung Ω", "a[1]$b"};
  VcdOptions options;
  options.probe_labels = labels;
  const std::string vcd = export_vcd(small_capture(), options);
  EXPECT_NE(vcd.find("$var wire 1 ) Kühlung_Ω $end\n$var wire 1 * a_1__b $end\n"), std::string::npos) << vcd;
  EXPECT_NE(vcd.find("$var wire 1 1 Kühlung_Ω_code[0] $end\n"), std::string::npos) << vcd;
}

// A coarser timescale merges the polls of one tick: at 10 ns the 250.3 and 250.4 ns polls (probe 1 back to
// its code) fall into tick 25 and cancel out, so no timestamp is left there; nothing drifts.
TEST(ExportVcd, CoarserTimescaleMergesThePollsOfATick) {
  VcdOptions options;
  options.timescale_ps = 10'000;
  const std::string vcd = export_vcd(small_capture(), options);
  EXPECT_NE(vcd.find("$timescale 10 ns $end\n"), std::string::npos) << vcd;
  const size_t body = vcd.find("#10\n");
  ASSERT_NE(body, std::string::npos) << vcd;
  EXPECT_EQ(vcd.substr(body), "#10\n1!\n1&\n1)\n1*\n11\n16\n#50\n0&\n0*\n06\n#200\n");
  options.timescale_ps = 1'000'000;  // 1 us: everything in tick 0 after the initial values; the end at 2 us
  const std::string us = export_vcd(small_capture(), options);
  EXPECT_NE(us.find("$timescale 1 us $end\n"), std::string::npos);
  const size_t dumped = us.find("05\n$end\n");
  ASSERT_NE(dumped, std::string::npos) << us;
  // 100-250.4 ns round to tick 0 (written right after the initial values), 500 ns to tick 1.
  EXPECT_EQ(us.substr(dumped), "05\n$end\n1!\n1&\n1)\n1*\n11\n16\n#1\n0&\n0*\n06\n#2\n");
}

TEST(ExportVcd, TimescaleTakesOneTenOrAHundredOfAUnit) {
  EXPECT_EQ(*parse_vcd_timescale("1ns"), 1000);
  EXPECT_EQ(*parse_vcd_timescale("10ns"), 10'000);
  EXPECT_EQ(*parse_vcd_timescale("100ns"), 100'000);
  EXPECT_EQ(*parse_vcd_timescale("1us"), 1'000'000);
  EXPECT_EQ(*parse_vcd_timescale("100ps"), 100);
  EXPECT_EQ(*parse_vcd_timescale("1s"), 1'000'000'000'000);
  for (const char* bad : {"", "ns", "2ns", "1 ns", "1000ns", "1nsx", "-1ns", "1fs", "10"}) {
    auto parsed = parse_vcd_timescale(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("expected 1, 10 or 100"), std::string::npos);
  }
}

TEST(ExportVcd, TimesStrictlyIncreaseEvenWhenPollsCrowdAndPretriggerIsNegative) {
  Capture capture;
  capture.info.tsc_hz = 3'000'000'000;
  capture.info.probe_count = 8;
  capture.info.layout = "8x1";
  std::mt19937 rng(7);
  uint64_t tsc = 0;
  uint8_t lines = 0;
  for (uint64_t seq = 0; seq < 2000; ++seq) {
    tsc += 1 + rng() % 3;  // a third of a ns to one ns apart: many collide after rounding
    const uint8_t probe = static_cast<uint8_t>(1 + rng() % 8);
    lines ^= static_cast<uint8_t>(1u << (probe - 1));
    capture.events.push_back({seq, probe, static_cast<uint8_t>((lines >> (probe - 1)) & 1), lines, tsc,
                              static_cast<double>(tsc) / 3.0 - 200.0});
  }
  const std::string vcd = export_vcd(capture);
  std::istringstream in(vcd);
  std::string line;
  long long previous = -1, stamps = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '#') continue;
    const long long t = std::stoll(line.substr(1));
    EXPECT_GT(t, previous) << line;
    previous = t;
    ++stamps;
  }
  EXPECT_EQ(stamps, 2000 + 2);  // #0, one per poll, the final timestamp
}

// The VCD written from events a batch at a time (VcdWriter, as `ett export` streams the trace) is the one
// written from the whole capture, at every timescale and without the vectors, with batches that end inside a
// poll (events of one TSC) and inside a merged tick: batches of one event, and the odd sizes of
// add_in_batches over 600,000 events that start before the capture start (a negative origin) and reach a
// probe past the layout.
TEST(ExportVcd, WrittenABatchAtATimeIsTheWholeCapturesVcd) {
  Capture crowded;
  crowded.info.tsc_hz = 3'000'000'000;
  crowded.info.capture_start_tsc = 0;
  crowded.info.capture_end_tsc = 9000;
  std::mt19937 rng(5);
  uint64_t tsc = 0;
  uint8_t lines = 0;
  for (uint64_t seq = 0; seq < 3000; ++seq) {
    if (rng() % 3) tsc += rng() % 5;  // a third of the events share their predecessor's poll
    const auto probe = static_cast<uint8_t>(1 + rng() % 2);
    lines = static_cast<uint8_t>(rng());
    crowded.events.push_back({seq, probe, static_cast<uint8_t>(lines & 15), lines, tsc, tsc / 3.0 - 50});
  }
  Capture big;
  big.info.tsc_hz = 1'000'000'000;
  big.info.capture_end_tsc = 1'000'000'000'000;
  big.events = ett::test::streamed_events(-500, 4);
  for (const int64_t timescale_ps : {int64_t{1}, int64_t{1000}, int64_t{10'000}, int64_t{1'000'000}})
    for (const bool bus : {true, false}) {
      SCOPED_TRACE(fmt::format("timescale {} ps, bus {}", timescale_ps, bus));
      const VcdOptions options{timescale_ps, bus};
      auto streamed = [&](const Capture& capture, bool one_at_a_time) {
        TextOut out;
        const auto by_probe = [](const AnalysisEvent& a, const AnalysisEvent& b) {
          return a.probe < b.probe;
        };
        const auto by_time = [](const AnalysisEvent& a, const AnalysisEvent& b) {
          return a.time_ns < b.time_ns;
        };
        const std::span<const AnalysisEvent> events = capture.events;
        VcdWriter writer(capture.info, std::ranges::max_element(events, by_probe)->probe,
                         std::ranges::min_element(events, by_time)->time_ns, out, options);
        if (one_at_a_time)
          for (size_t i = 0; i < capture.events.size(); ++i)
            writer.add(std::span(capture.events).subspan(i, 1));
        else
          ett::test::add_in_batches(writer, capture.events);
        writer.finish();
        return out.take();
      };
      const std::string whole = export_vcd(crowded, options);
      EXPECT_EQ(streamed(crowded, true), whole);
      const std::string big_whole = export_vcd(big, options);
      EXPECT_TRUE(streamed(big, false) == big_whole) << big_whole.size() << " bytes";
    }
}

// The trace events of a Perfetto JSON document (parsed: a writer that is not valid JSON fails here) that have
// every field of `match` with its value.
std::vector<nlohmann::json> perfetto_events(const std::string& text, const nlohmann::json& match) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  std::vector<nlohmann::json> found;
  if (doc.is_discarded() || !doc.contains("traceEvents")) {
    ADD_FAILURE() << "not a Perfetto JSON document: " << text.substr(0, 200);
    return found;
  }
  for (const auto& event : doc["traceEvents"]) {
    bool all = true;
    for (const auto& [key, value] : match.items()) all = all && event.contains(key) && event[key] == value;
    if (all) found.push_back(event);
  }
  return found;
}

TEST(ExportPerfetto, ActionsAreAsyncPairsOnTheirOwnIdsAndEventsAreInstants) {
  const Capture capture = small_capture();
  const std::vector<Action> actions = {{0, 4, 1, 0, false, 100, 500, 400},
                                       {2, 3, 0, 1, false, 250.3, 250.4, 0.1}};
  const std::string json = export_perfetto(capture, actions);
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"args\":{\"name\":\"probe 2\"}"), std::string::npos);
  EXPECT_NE(json.find("{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":0.250,\"name\":\"code 0\""),
            std::string::npos);
  EXPECT_NE(json.find("{\"ph\":\"b\",\"cat\":\"action\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":0.100,"),
            std::string::npos);
  EXPECT_NE(json.find("{\"ph\":\"e\",\"cat\":\"action\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":0.500,"),
            std::string::npos);
  EXPECT_NE(json.find("\"ph\":\"b\",\"cat\":\"action\",\"id\":2,"), std::string::npos);
  EXPECT_NE(json.find("\"ph\":\"e\",\"cat\":\"action\",\"id\":2,"), std::string::npos);
  // Parsed: the probe's track name, one begin and one end per action on its id, an instant per event.
  EXPECT_EQ(perfetto_events(json, {{"name", "thread_name"}, {"args", {{"name", "probe 2"}}}}).size(), 1u);
  for (int id : {1, 2}) {
    EXPECT_EQ(perfetto_events(json, {{"ph", "b"}, {"cat", "action"}, {"id", id}}).size(), 1u) << id;
    EXPECT_EQ(perfetto_events(json, {{"ph", "e"}, {"cat", "action"}, {"id", id}}).size(), 1u) << id;
  }
  EXPECT_EQ(perfetto_events(json, {{"ph", "i"}}).size(), capture.events.size());
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '"' && json[i - 1] != '\\') in_string = !in_string;
    if (in_string) continue;
    if (json[i] == '{' || json[i] == '[') ++depth;
    if (json[i] == '}' || json[i] == ']') --depth;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

TEST(ExportPerfetto, EachProbeHasACodeCounterTrackNamedByItsLabel) {
  const std::vector<std::string> labels = {"node \"A\""};
  const std::string json = export_perfetto(small_capture(), {}, {labels, nullptr});
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"args\":{\"name\":\"node \\\"A\\\"\"}"), std::string::npos)
      << json;
  EXPECT_NE(
      json.find("{\"ph\":\"C\",\"pid\":1,\"name\":\"node \\\"A\\\"\",\"ts\":0.250,\"args\":{\"code\":0}}"),
      std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"ph\":\"C\",\"pid\":1,\"name\":\"probe 2\",\"ts\":0.500,\"args\":{\"code\":0}}"),
            std::string::npos)
      << json;  // Parsed, the escaped label is the label again.
  EXPECT_EQ(perfetto_events(json, {{"name", "thread_name"}, {"args", {{"name", labels[0]}}}}).size(), 1u)
      << json;
  EXPECT_FALSE(perfetto_events(json, {{"ph", "C"}, {"name", labels[0]}}).empty()) << json;
}

// Events handed to a PerfettoWriter in batches of any size (blocks written behind by its thread, more than
// two of them) write what the whole capture writes, actions and all; so do actions kept as their ends.
TEST(ExportPerfetto, EventsInBatchesWriteWhatTheWholeCaptureWrites) {
  Capture capture = small_capture();
  capture.events = ett::test::streamed_events(-500, 3);
  const std::vector<ActionEnds> ends = ett::test::streamed_actions(capture.events);
  const std::vector<std::string> labels = {"node \"A\""};
  const PerfettoOptions options{labels, nullptr};
  const std::string whole = export_perfetto(capture, ActionList(ends), options);

  TextOut out;
  {
    PerfettoWriter writer(capture.info, 9, out, options);
    ett::test::add_in_batches(writer, capture.events, ends);
    writer.finish();
  }
  const std::string batched = out.take();
  EXPECT_EQ(batched.size(), whole.size());
  EXPECT_TRUE(batched == whole);
  auto count = [&batched](std::string_view word) {
    size_t n = 0;
    for (size_t at = batched.find(word); at != std::string::npos; at = batched.find(word, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("{\"ph\":\"i\""), capture.events.size());
  EXPECT_EQ(count("{\"ph\":\"C\",\"pid\":1,\"name\":\"probe 9\""), 1u);
  EXPECT_EQ(count("{\"ph\":\"b\""), ends.size());
  EXPECT_EQ(count("\"tid\":9,\"name\":\"thread_name\""), 1u);
  // Each action right after the event that closed it: the instant before its begin is its end event's, and
  // the instant after it the next event's.
  auto instant_of = [&batched](uint64_t seq) {
    return batched.rfind("{\"ph\":\"i\"", batched.find(fmt::format("\"seq\":{},", seq)));
  };
  for (size_t i : {size_t{0}, size_t{1}, ends.size() / 2, ends.size() - 1}) {
    const size_t begin = batched.find(fmt::format("{{\"ph\":\"b\",\"cat\":\"action\",\"id\":{},", i + 1));
    ASSERT_NE(begin, std::string::npos) << i;
    EXPECT_EQ(batched.rfind("{\"ph\":\"i\"", begin), instant_of(ends[i].end_seq)) << i;
    if (ends[i].end_seq + 1 < capture.events.size()) {
      EXPECT_EQ(batched.find("{\"ph\":\"i\"", begin), instant_of(ends[i].end_seq + 1)) << i;
    }
  }
}

// Actions handed to finish (not with the events that close them, or from a list not in end seq order) follow
// every event, their ids their places in the list.
TEST(ExportPerfetto, ActionsGivenAtTheEndFollowTheEvents) {
  const Capture capture = small_capture();
  const std::vector<Action> unordered = {{0, 4, 1, 0, false, 100, 500, 400},
                                         {2, 3, 0, 1, false, 250.3, 250.4, 0.1}};
  TextOut out;
  {
    PerfettoWriter writer(capture.info, 2, out, {});
    writer.add(capture.events);
    writer.finish(unordered);
  }
  const std::string at_end = out.take();
  EXPECT_EQ(at_end, export_perfetto(capture, unordered));
  const size_t last_instant = at_end.rfind("{\"ph\":\"i\"");
  const size_t first_begin = at_end.find("{\"ph\":\"b\"");
  ASSERT_NE(first_begin, std::string::npos);
  EXPECT_GT(first_begin, last_instant);
  EXPECT_EQ(at_end.find("{\"ph\":\"b\",\"cat\":\"action\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":0.100,"),
            first_begin);
}

// With a PPS mapping the CSV gains an ISO-8601 UTC column: at 1 GHz with pulse 0 (UTC second S) at TSC 1000,
// the event at TSC 1100 is 100 ns after S.
TEST(ExportCsv, UtcColumnFromThePpsMapping) {
  const int64_t second = 1'795'392'000;  // 2026-11-23T00:00:00Z
  const TscUtcClock utc(1000, 1e9, second);
  const std::string csv = export_csv(small_capture(), &utc);
  EXPECT_EQ(csv.substr(0, csv.find('\n', csv.find('\n') + 1) + 1),
            "seq,probe,code,tsc,time_ns,lines,time_utc\n0,1,1,1100,100.0,1,2026-11-23T00:00:00.000000100Z\n");
  EXPECT_NE(csv.find("\n4,2,0,1500,500.0,1,2026-11-23T00:00:00.000000500Z\n"), std::string::npos) << csv;
  EXPECT_EQ(format_iso_utc({second - 1, 999'999'999}), "2026-11-22T23:59:59.999999999Z");
  EXPECT_EQ(format_iso_utc({951'782'400, 5}), "2000-02-29T00:00:00.000000005Z");  // a leap day
  EXPECT_EQ(format_iso_utc({0, 0}), "1970-01-01T00:00:00.000000000Z");
}

TEST(ExportCsv, TenthsOfANanosecondRoundLikePrintf) {
  Capture capture = small_capture();
  capture.events.resize(1);
  for (double ns : {-0.05, -200.25, 0.04, 1234567.96, 99.95, 1e12 + 0.3}) {
    capture.events[0].time_ns = ns;
    const std::string csv = export_csv(capture);
    EXPECT_NE(csv.find(fmt::format(",{:.1f},", ns)), std::string::npos) << ns << " " << csv;
  }
}

TEST(ExportCsv, OneLinePerEvent) {
  EXPECT_EQ(export_csv(small_capture()),
            "seq,probe,code,tsc,time_ns,lines\n0,1,1,1100,100.0,1\n1,2,2,1100,100.0,33\n2,1,0,1250,250.3,32\n"
            "3,1,1,1251,250.4,33\n4,2,0,1500,500.0,1\n");
}

// A file written in pieces (TextOut flushes each megabyte) holds the same text as the export made whole, and
// an existing file is neither written over nor emptied without --force.
TEST(TextOut, StreamsToAFileTheTextOfTheWholeExportAndKeepsExistingFiles) {
  Capture capture = small_capture();
  capture.events.clear();
  for (uint64_t i = 0; i < 150000; ++i)  // three chunks of write_independent_lines, one on its thread
    capture.events.push_back({i, static_cast<uint8_t>(1 + i % 2), static_cast<uint8_t>(i % 7),
                              static_cast<uint8_t>(i), 1000 + 3 * i, 3.0 * static_cast<double>(i)});
  const std::string whole = export_csv(capture);
  ASSERT_GT(whole.size(), 3u << 20);  // more than one flush
  char dir[] = "/tmp/ett-textout-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/out.csv";
  {
    auto out = TextOut::open(path, false);
    ASSERT_TRUE(out) << out.error().message;
    write_csv(capture, *out);
    ASSERT_TRUE(out->finish());
  }
  auto read = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read(), whole);
  auto again = TextOut::open(path, false);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("already exists; use --force"), std::string::npos);
  EXPECT_EQ(read(), whole);
  {
    auto forced = TextOut::open(path, true);
    ASSERT_TRUE(forced);
    forced->append("x\n");
    ASSERT_TRUE(forced->finish());
  }
  EXPECT_EQ(read(), "x\n");
  // A writer that starts again (a stream the database restarted) takes back what it wrote, flushed or not;
  // the CSV written in batches after that is the whole export.
  {
    auto restarted = TextOut::open(path, true);
    ASSERT_TRUE(restarted);
    ASSERT_TRUE(restarted->can_rewind());
    CsvWriter(*restarted, nullptr).add(std::span(capture.events).first(100000));  // past a flush
    ASSERT_TRUE(restarted->rewind());
    CsvWriter writer(*restarted, nullptr);
    for (size_t at = 0; at < capture.events.size(); at += 7000)
      writer.add(std::span(capture.events).subspan(at, std::min<size_t>(7000, capture.events.size() - at)));
    ASSERT_TRUE(restarted->finish());
  }
  EXPECT_EQ(read(), whole);
  // Standard output and devices cannot take anything back.
  auto device = TextOut::open("/dev/null", true);
  ASSERT_TRUE(device);
  EXPECT_FALSE(device->can_rewind());
  EXPECT_FALSE(device->rewind());
  EXPECT_FALSE(TextOut::open("-", false)->can_rewind());
  std::filesystem::remove_all(dir);
}

// A file of many of the blocks TextOut hands to the disk on a thread (DirectWriter; on a file system without
// O_DIRECT, past the 64 MB WriteBehind keeps in the page cache), taken back while blocks are on their way and
// written again: the file is the second writer's text, byte for byte.
TEST(TextOut, PastManyBlocksAndRewoundHoldsItsText) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  auto text = [](uint64_t size, char salt) {
    std::string all;
    all.reserve(size);
    for (uint64_t line = 0; all.size() < size; ++line) all += std::to_string(line * 7919 + salt) + ",x\n";
    return all;
  };
  const std::string first = text(80 * kMiB, 1), second = text(72 * kMiB, 2);
  char dir[] = "/tmp/ett-textout-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/out.csv";
  {
    auto out = TextOut::open(path, false);
    ASSERT_TRUE(out) << out.error().message;
    for (size_t at = 0; at < first.size(); at += 300000)
      out->append(std::string_view(first).substr(at, 300000));
    ASSERT_TRUE(out->rewind());
    for (size_t at = 0; at < second.size(); at += 5000)
      out->append(std::string_view(second).substr(at, 5000));
    ASSERT_TRUE(out->finish());
  }
  std::ifstream in(path, std::ios::binary);
  const std::string read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read.size(), second.size());
  EXPECT_TRUE(read == second);
  std::filesystem::remove_all(dir);
}

// Items formatted on two threads and written by whichever formatted them, in turn: the text of one loop, for
// counts around the chunk size (4096 items) and lines of uneven length; a format that throws, on either
// thread, stops the writing and the exception comes out (no hang, nothing from the failed chunk on).
TEST(TextOut, IndependentLinesComeInOrderAndAFailedChunkStopsThem) {
  auto line = [](size_t i) { return fmt::format("{}:{}\n", i, std::string(i * 7919 % 61, 'x')); };
  auto format = [&](size_t begin, size_t end, fmt::memory_buffer& buffer) {
    for (size_t i = begin; i < end; ++i) fmt::format_to(std::back_inserter(buffer), "{}", line(i));
  };
  for (size_t count : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{8192},
                       size_t{3 * 4096 + 5}, size_t{100003}}) {
    std::string expected;
    for (size_t i = 0; i < count; ++i) expected += line(i);
    TextOut out;
    write_independent_lines(count, format, out);
    EXPECT_EQ(out.take(), expected) << count;
  }
  for (size_t failing : {size_t{0}, size_t{1}, size_t{6}, size_t{7}}) {  // chunk 0, 1, 6, 7 throws
    TextOut out;
    auto failing_format = [&](size_t begin, size_t end, fmt::memory_buffer& buffer) {
      if (begin / 4096 == failing) throw std::runtime_error(fmt::format("chunk {}", failing));
      format(begin, end, buffer);
    };
    try {
      write_independent_lines(25 * 4096, failing_format, out);
      ADD_FAILURE() << "no exception for chunk " << failing;
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(error.what(), fmt::format("chunk {}", failing));
    }
    // What was written is the lines of some of the chunks before the failed one (the other thread may stop
    // before its turn), never more.
    const std::string text = out.take();
    std::string before;
    for (size_t i = 0; i < failing * 4096; ++i) before += line(i);
    EXPECT_LE(text.size(), before.size()) << failing;
    EXPECT_EQ(before.compare(0, text.size(), text), 0) << failing;
  }
}

// A thread does not wait for the other's chunk before it goes on: while chunk 0 is being formatted, the
// second thread formats chunks 1 and 3 (four chunks may be formatted and not yet written); the text is the
// same. (When each thread wrote its own chunk in turn, chunk 3 waited for chunk 0.)
TEST(TextOut, IndependentLinesGoOnWhileAnEarlierChunkIsFormatted) {
  std::mutex mutex;
  std::condition_variable started;
  bool third_started = false;
  auto format = [&](size_t begin, size_t end, fmt::memory_buffer& buffer) {
    const size_t chunk = begin / 4096;
    if (chunk == 0) {
      std::unique_lock lock(mutex);
      EXPECT_TRUE(started.wait_for(lock, std::chrono::seconds(30), [&] { return third_started; }))
          << "chunk 3 did not start while chunk 0 was formatted";
    } else if (chunk == 3) {
      std::lock_guard lock(mutex);
      third_started = true;
      started.notify_all();
    }
    for (size_t i = begin; i < end; ++i) fmt::format_to(std::back_inserter(buffer), "{}\n", i);
  };
  TextOut out;
  write_independent_lines(10 * 4096, format, out);
  std::string expected;
  for (size_t i = 0; i < 10 * 4096; ++i) expected += fmt::format("{}\n", i);
  EXPECT_EQ(out.take(), expected);
}

namespace {

// The protobuf's slice levels as first written: a heap of the busy levels (end, level) next to the heap of
// the free ones, over the slices in start order.
std::pair<std::vector<uint32_t>, size_t> reference_levels(const std::vector<uint64_t>& starts,
                                                          const std::vector<uint64_t>& ends) {
  std::vector<std::pair<uint64_t, uint32_t>> order;
  for (size_t i = 0; i < starts.size(); ++i) order.push_back({starts[i], static_cast<uint32_t>(i)});
  std::sort(order.begin(), order.end());
  std::vector<uint32_t> level(starts.size());
  uint32_t levels = 0;
  std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>,
                      std::greater<>>
      busy;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;
  for (const auto& [start, i] : order) {
    while (!busy.empty() && busy.top().first <= start) {
      free.push(busy.top().second);
      busy.pop();
    }
    if (free.empty()) {
      level[i] = levels++;
    } else {
      level[i] = free.top();
      free.pop();
    }
    busy.push({std::max(start, ends[i]), level[i]});
  }
  return {level, levels};
}

}  // namespace

// Levels walk the slices in end order instead of a heap of busy ones: the same levels as the heap, for slices
// in end order (as pair_actions gives them), in start order and neither, with ties, zero lengths and ends
// before starts; over spans of times that take one radix pass, several, or none (too wide to pack with the
// index: a stable sort); and in the start order that the start events' seqs give, whether they do or not.
TEST(ExportPerfetto, SliceLevelsAreTheBusyHeapsLevels) {
  std::mt19937_64 random(5);
  for (int round = 0; round < 300; ++round) {
    const size_t n = 1 + random() % 300;
    const uint64_t spans[] = {1 + random() % 50, uint64_t{1} << 40, uint64_t{1} << 62};
    const uint64_t span = spans[round % 5 < 3 ? 0 : round % 5 - 2];  // small: many equal starts and ends
    const uint64_t base = round % 2 ? uint64_t{1} << 61 : 0;         // the sort packs times less the smallest
    std::vector<uint64_t> starts(n), ends(n);
    for (size_t i = 0; i < n; ++i) {
      // Wide spans get ties too: every fourth start repeats an earlier one.
      starts[i] = i > 0 && random() % 4 == 0 ? starts[random() % i] : base + random() % span;
      const uint64_t length = random() % 4 == 0 ? 0 : random() % span;
      ends[i] = random() % 20 == 0 && starts[i] > 0 ? starts[i] - 1 : starts[i] + length;  // some end early
    }
    if (round % 3 != 2) {  // in end order, as pair_actions gives actions, or in start order (no overlap)
      std::vector<size_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return round % 3 == 0 ? std::max(starts[a], ends[a]) < std::max(starts[b], ends[b])
                              : starts[a] < starts[b];
      });
      std::vector<uint64_t> s(n), e(n);
      for (size_t i = 0; i < n; ++i) s[i] = starts[order[i]], e[i] = ends[order[i]];
      starts = s;
      ends = e;
    }
    const auto reference = reference_levels(starts, ends);
    ASSERT_EQ(slice_levels(starts, ends), reference) << "round " << round;
    // With the seqs of the start events as a hint: seqs in start order (the events' order; equal starts in
    // any order of seq), spread out or not; and hints that do not hold: a start earlier than the one before
    // it along the seqs, a seq given twice, seqs too spread out to scatter.
    std::vector<size_t> by_start(n);
    for (size_t i = 0; i < n; ++i) by_start[i] = i;
    std::shuffle(by_start.begin(), by_start.end(), random);
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](size_t a, size_t b) { return starts[a] < starts[b]; });
    const uint64_t first_seq = random() % 1000;
    std::vector<uint64_t> seqs(n), spread(n), wide(n);
    for (size_t k = 0, seq = first_seq; k < n; ++k, seq += 1 + random() % 3) {
      seqs[by_start[k]] = first_seq + k;
      spread[by_start[k]] = seq;
      wide[by_start[k]] = first_seq + k * 5;
    }
    ASSERT_EQ(slice_levels(starts, ends, seqs), reference) << "round " << round;
    ASSERT_EQ(slice_levels(starts, ends, spread), reference) << "round " << round;
    ASSERT_EQ(slice_levels(starts, ends, wide), reference) << "round " << round;
    if (n >= 2) {
      std::vector<uint64_t> swapped = seqs, twice = seqs;
      const size_t a = random() % n, b = random() % n;
      std::swap(swapped[a], swapped[b]);
      twice[a] = twice[b];
      ASSERT_EQ(slice_levels(starts, ends, swapped), reference) << "round " << round;
      ASSERT_EQ(slice_levels(starts, ends, twice), reference) << "round " << round;
    }
  }
  EXPECT_EQ(slice_levels({}, {}).second, 0u);
  EXPECT_EQ(slice_levels({}, {}, {}).second, 0u);
}
