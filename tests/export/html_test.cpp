// html_test.cpp: the HTML report: its sections and data (parsed back from the page), the open-ended histogram
// bin, the clipped scatter, the bounded size of a million-event report, and the page in real headless
// Chromium through chromedriver (tests/support/browser_check.py): drawn without console errors or network
// requests, and zoomed by its button and by a mouse drag, each of which changes the timeline's range and its
// pixels.
#include "export/html.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "support/png.h"

using namespace ett::host;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// At 1 GHz: two probes, probe 1 starting actions (code 1) and probe 2 ending them (code 2), `count` actions
// 100 µs apart, each 200-300 ns long except every `outlier_every`-th, 50 µs long; one stall over the first
// action.
Capture actions_capture(size_t count, size_t outlier_every = 0) {
  Capture capture;
  capture.info.name = "trace 1";
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.capture_start_tsc = 1000;
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> spread(200, 300);
  uint64_t seq = 0;
  for (size_t i = 0; i < count; ++i) {
    const double start = 1000.0 + i * 100'000.0;
    const double length = outlier_every && i % outlier_every == outlier_every - 1 ? 50'000 : spread(random);
    capture.events.push_back({seq++, 1, 1, 0x01, uint64_t(1000 + start), start});
    capture.events.push_back({seq++, 2, 2, 0x20, uint64_t(1000 + start + length), start + length});
  }
  std::sort(capture.events.begin(), capture.events.end(),
            [](const AnalysisEvent& a, const AnalysisEvent& b) { return a.time_ns < b.time_ns; });
  for (size_t i = 0; i < capture.events.size(); ++i) capture.events[i].seq = i;
  capture.info.capture_end_tsc = 1000 + uint64_t(count * 100'000.0 + 60'000);
  capture.stalls = {{1100, 400}};
  return capture;
}

// The page's data: the JSON of its #ett-data script element.
json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"ett-data\">";
  const size_t at = html.find(open);
  if (at == std::string::npos) return nullptr;
  const size_t from = at + open.size(), to = html.find("</script>", from);
  return json::parse(html.substr(from, to - from));
}

DurationsResult durations_of(const Capture& capture) {
  auto durations = pair_actions(capture.events, {1, {}}, {2, {}}, 100, PairRule::Fifo);
  EXPECT_TRUE(durations);
  mark_stalls(*durations, StallMarks(capture.stalls, capture.events), capture.stalls.size());
  return *durations;
}

}  // namespace

TEST(ExportHtml, SelfContainedWithEverySection) {
  Capture capture = actions_capture(20);
  capture.info.name = "trace <1> & \"x\"";
  auto precision = precision_from_steps({100, 100, 120, 150}, 1'000'000'000, 2);
  ASSERT_TRUE(precision);
  const DurationsResult durations = durations_of(capture);
  FitResult fit;
  fit.fit = {100, 2, 1, 0.1, 0.99, 0, 3};
  fit.x = {1, 2, 3};
  fit.y = {102, 104, 106};
  const std::string html = export_html({&capture, &*precision, &durations, &fit});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("trace &lt;1&gt; &amp; &quot;x&quot;"), std::string::npos);
  EXPECT_EQ(html.find("trace <1>"), std::string::npos);
  for (const char* section :
       {"<h2>Capture</h2>", "<h2>Precision</h2>", "<h2>Timeline</h2>", "<h2>Durations</h2>",
        "<h2>Latency model</h2>", "<td>100.0 %</td><td>150.0 ns</td>", "id=\"chart-timeline\"",
        "id=\"chart-steps\"", "id=\"chart-durations\"", "id=\"chart-duration-time\"", "id=\"chart-fit\"",
        "uPlot"})
    EXPECT_NE(html.find(section), std::string::npos) << section;
  // Nothing is referenced from outside: every script and style is inline (the browser test checks that the
  // page makes no request at all).
  for (const char* external : {"<script src", "<link", "src=\"", "href=\"", "@import"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  const json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  for (const char* chart : {"timeline", "steps", "durations", "duration_time", "fit"})
    EXPECT_TRUE(data.contains(chart)) << chart;
  EXPECT_EQ(data["timeline"]["stalls"], json::parse("[[1100.0, 400.0]]"));
  EXPECT_EQ(data["fit"]["line"], json::parse("[100.0, 2.0]"));
}

TEST(ExportHtml, LabelsNameTheLanesAndLegendsAndCannotBreakThePage) {
  const Capture capture = actions_capture(5);
  ReportInput input{&capture};
  input.probe_labels = {{1, "node <A></script><!--"}, {2, "sink"}};
  const std::string html = export_html(input);
  EXPECT_EQ(html.find("node <A></script>"), std::string::npos);
  EXPECT_NE(html.find("events on probe 1: node &lt;A&gt;&lt;/script&gt;&lt;!--"), std::string::npos);
  const json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  ASSERT_EQ(data["timeline"]["probes"].size(), 2u);
  EXPECT_EQ(data["timeline"]["probes"][0]["name"], "probe 1: node <A></script><!--");
  EXPECT_EQ(data["timeline"]["probes"][1]["name"], "probe 2: sink");
  // Every event is on the timeline (not downsampled), each with its code.
  EXPECT_EQ(data["timeline"]["probes"][0]["t"].size(), 5u);
  EXPECT_EQ(data["timeline"]["probes"][1]["c"][0], 2);
  EXPECT_EQ(html.find("Downsampled"), std::string::npos);
}

TEST(ExportHtml, TheHistogramsLastBinIsOpenEndedAndHoldsTheOutliers) {
  const Capture capture = actions_capture(2000, 500);  // 4 actions of 50 µs among 1996 of 200-300 ns
  const DurationsResult durations = durations_of(capture);
  const std::string html = export_html({&capture, nullptr, &durations});
  const json h = page_data(html)["durations"];
  ASSERT_TRUE(h["tail"].get<bool>());
  const json& edges = h["edges"];
  const json& counts = h["series"][0]["values"];
  ASSERT_EQ(edges.size(), counts.size());
  // The equal bins end near the bulk, not at the outliers: the outliers are all in the last bin.
  EXPECT_LT(edges[edges.size() - 2][1].get<double>(), 1000.0);
  EXPECT_EQ(edges.back()[1].get<double>(), 50'000.0);
  EXPECT_GE(counts.back().get<uint64_t>(), 4u);
  uint64_t total = 0;
  for (const json& c : counts) total += c.get<uint64_t>();
  EXPECT_EQ(total, durations.actions.size());
  EXPECT_NE(html.find("The last bin is open-ended"), std::string::npos);
  // Without outliers there is no open-ended bin.
  const Capture plain = actions_capture(2000);
  const DurationsResult plain_durations = durations_of(plain);
  EXPECT_FALSE(page_data(export_html({&plain, nullptr, &plain_durations}))["durations"]["tail"].get<bool>());
}

TEST(ExportHtml, TheScatterIsClippedAboveTheBulkAndCountsTheOutliers) {
  const Capture capture = actions_capture(2000, 500);
  const DurationsResult durations = durations_of(capture);
  const json s = page_data(export_html({&capture, nullptr, &durations}))["duration_time"];
  ASSERT_FALSE(s["clip_ns"].is_null());
  EXPECT_LT(s["clip_ns"].get<double>(), 1000.0);
  EXPECT_EQ(s["above"], 4);
  EXPECT_EQ(s["max_ns"], 50'000.0);
  EXPECT_EQ(s["x"].size(), durations.actions.size());
  // The action the stall touches is marked.
  size_t stalled = 0;
  for (const json& flag : s["stalled"]) stalled += flag.get<int>();
  EXPECT_EQ(stalled, durations.stalled);
  EXPECT_GE(stalled, 1u);
}

TEST(ExportHtml, AMillionEventReportStaysSmallAndSaysItIsDownsampled) {
  Capture capture = actions_capture(500'000, 100'000);
  // Probe 1's code climbs to 0xff once, in one event: downsampling keeps each bucket's highest code.
  capture.events[123'457].code = 0xff;
  const DurationsResult durations = durations_of(capture);
  const std::string html = export_html({&capture, nullptr, &durations});
  EXPECT_LT(html.size(), 6u << 20) << "the report of 1 M events is " << html.size() << " bytes";
  EXPECT_NE(html.find("id=\"timeline-downsampled\""), std::string::npos);
  const json data = page_data(html);
  size_t points = 0;
  for (const json& probe : data["timeline"]["probes"]) points += probe["t"].size();
  EXPECT_LE(points, 2u * 2000 * 4);
  EXPECT_GT(points, 2000u);
  EXPECT_EQ(data["timeline"]["probes"][capture.events[123'457].probe - 1]["max_code"], 0xff);
  EXPECT_LE(data["duration_time"]["x"].size(), 20000u);
  EXPECT_EQ(data["duration_time"]["above"], 5);
}

TEST(ExportHtml, SaysWhatIsMissing) {
  const Capture capture = actions_capture(3);
  const std::string html = export_html({&capture, nullptr, nullptr, nullptr});
  EXPECT_NE(html.find("ett analyze precision"), std::string::npos);
  EXPECT_NE(html.find("--from P[:C] --to P[:C]"), std::string::npos);
  EXPECT_NE(html.find("<h2>Timeline</h2>"), std::string::npos);
}

namespace {

bool have_tool(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

std::string run_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  return out;
}

}  // namespace

// Through the real `ett`: two synthetic captures loaded, a probe named with `ett label`, a report of the
// second with the first as --baseline: the lanes and tables use the name and the comparison chart is there.
TEST(ReportCommand, UsesTheLabelsAndKeepsTheBaselineComparison) {
  std::string pattern = (fs::temp_directory_path() / "ett-report-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const std::string ett = "cd " + dir.string() + " && ETT_DB= " ETT_BIN_DIR "/ett";
  const std::string commands =
      ett + " synth t.img --events 400 --seed 1 && " + ett + " synth t.img --events 400 --seed 2 && " + ett +
      " load t.img --all --db sqlite:t.db && " + ett +
      " label --db sqlite:t.db --trace 2 --probe 1 'node <A>' && " + ett +
      " report --db sqlite:t.db --trace 2 --from 1 --to 2 --pair fifo --baseline 1 -o r.html";
  ASSERT_EQ(std::system(("(" + commands + ") >/dev/null 2>&1").c_str()), 0) << commands;
  std::ifstream in(dir / "r.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<tr><th>events on probe 1: node &lt;A&gt;</th>"), std::string::npos);
  const json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["timeline"]["probes"][0]["name"], "probe 1: node <A>");
  EXPECT_EQ(data["timeline"]["probes"][1]["name"], "probe 2");
  ASSERT_TRUE(data.contains("comparison"));
  EXPECT_EQ(data["comparison"]["series"].size(), 2u);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST(ReportInChromium, DrawsWithoutErrorsOrRequestsAndZoomsByButtonAndDrag) {
  if (!have_tool("chromium") || !have_tool("chromedriver") || !have_tool("python3"))
    GTEST_SKIP()
        << "chromium, chromedriver or python3 is not installed (Debian chromium, chromium-driver, python3)";
  std::string pattern = (fs::temp_directory_path() / "ett-html-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  // Every chart: the timeline with a stall and labels, both histograms (one with an open-ended bin), the
  // clipped scatter, the fit and a comparison.
  const Capture capture = actions_capture(1000, 400);
  auto precision = precision_from_steps({100, 100, 120, 150, 300, 5000}, 1'000'000'000, 2);
  ASSERT_TRUE(precision);
  const DurationsResult durations = durations_of(capture);
  FitResult fit;
  fit.fit = {100, 2, 1, 0.1, 0.99, 0, 4};
  fit.x = {1, 2, 3, 3};
  fit.y = {102, 104, 106, 900};
  ReportComparison comparison;
  comparison.baseline_traces = {2};
  for (const Action& action : durations.actions) {
    comparison.candidate_ns.push_back(action.duration_ns);
    comparison.baseline_ns.push_back(action.duration_ns * 0.9);
  }
  ReportInput input{&capture, &*precision, &durations, &fit, &comparison};
  input.probe_labels = {{1, "request"}, {2, "reply"}};
  { std::ofstream(dir / "report.html") << export_html(input); }
  const std::string output =
      run_output("timeout 600 python3 " ETT_SOURCE_DIR "/tests/support/browser_check.py " +
                 (dir / "report.html").string() + " " + dir.string());
  const json result = json::parse(output, nullptr, false);
  ASSERT_TRUE(result.is_object()) << output;
  ASSERT_FALSE(result.contains("error")) << result.dump(1);
  EXPECT_EQ(result["ready"], "1") << result.dump(1);
  EXPECT_EQ(result["ready_after"], "1");
  for (const char* chart : {"timeline", "steps", "durations", "duration-time", "fit", "comparison"})
    EXPECT_NE(std::find(result["charts"].begin(), result["charts"].end(), chart), result["charts"].end())
        << chart;
  // The legend names the probes by their labels; the histogram's last tick says the bin is open-ended.
  const std::string legend = result["legend"].dump();
  EXPECT_NE(legend.find("probe 1: request"), std::string::npos) << legend;
  EXPECT_NE(legend.find("probe 2: reply"), std::string::npos) << legend;
  // Hovering the timeline shows the time and the code every probe holds there (probe 1 starts actions with
  // code 1, probe 2 ends them with code 2), not "–" for each probe but the one that changed at that instant.
  ASSERT_EQ(result["hover_legend"].size(), 3u) << result["hover_legend"];
  EXPECT_NE(result["hover_legend"][0], "–") << result["hover_legend"];
  EXPECT_EQ(result["hover_legend"][1], "code 0x1") << result["hover_legend"];
  EXPECT_EQ(result["hover_legend"][2], "code 0x2") << result["hover_legend"];
  ASSERT_FALSE(result["histogram_ticks"].empty());
  EXPECT_EQ(result["histogram_ticks"].back().get<std::string>().rfind("≥ ", 0), 0u)
      << result["histogram_ticks"];
  // The duration scatter switches to its log axis (uPlot's distr 3) when its box is ticked.
  EXPECT_EQ(result["scatter_log_distr"], 3);
  // No console message of level warning or error (the log axis included), and no request but the page itself.
  for (const json& entry : result["console"])
    EXPECT_TRUE(entry["level"] != "SEVERE" && entry["level"] != "WARNING") << entry.dump();
  EXPECT_TRUE(result["resources"].empty()) << result["resources"];
  for (const json& url : result["requests"]) EXPECT_EQ(url, result["page_url"]) << url;
  // Each zoom narrows the time range and changes the drawn timeline.
  const auto span = [&](const char* key) {
    return result[key][1].get<double>() - result[key][0].get<double>();
  };
  EXPECT_NEAR(span("x_after_button"), span("x_before") / 2, span("x_before") * 1e-6);
  EXPECT_LT(span("x_after_drag"), span("x_after_button") * 0.5);
  const auto before = ett::test::read_png(result["before_png"].get<std::string>());
  const auto after_button = ett::test::read_png(result["after_button_png"].get<std::string>());
  const auto after_drag = ett::test::read_png(result["after_drag_png"].get<std::string>());
  ASSERT_TRUE(before && after_button && after_drag) << "a screenshot is not an 8-bit RGB(A) PNG";
  const long area = long(before->width) * before->height;
  EXPECT_GT(ett::test::non_white_pixels(*before), area / 50) << "the timeline is (nearly) blank";
  // The stall (400 ns of a 100 ms capture) is a red band across the lanes, at least 2 px wide.
  long stall_pixels = 0;
  for (size_t i = 0; i + 2 < before->rgb.size(); i += 3) {
    const int r = before->rgb[i], g = before->rgb[i + 1], b = before->rgb[i + 2];
    stall_pixels += r > 200 && r - g > 30 && r - b > 30 && g > 120 && b > 120;
  }
  EXPECT_GT(stall_pixels, 100);
  EXPECT_GT(ett::test::differing_pixels(*before, *after_button), area / 200);
  EXPECT_GT(ett::test::differing_pixels(*after_button, *after_drag), area / 200);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

// `ett report --time utc`: with a PPS mapping the page draws its time axes in UTC time of day, without an
// error.
TEST(ReportInChromium, UtcAxesDrawTimeOfDay) {
  if (!have_tool("chromium") || !have_tool("chromedriver") || !have_tool("python3"))
    GTEST_SKIP()
        << "chromium, chromedriver or python3 is not installed (Debian chromium, chromium-driver, python3)";
  std::string pattern = (fs::temp_directory_path() / "ett-html-utc-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const Capture capture = actions_capture(200);
  const DurationsResult durations = durations_of(capture);
  // Time 0 (TSC 1000) is 2026-11-23T16:00:05.250000000Z; the PPS's second is 1.00001 of the capture's.
  PpsResult mapping;
  mapping.utc_second = 1'795'449'605;
  mapping.anchor_tsc = 1000 - 0.25 * 1'000'010'000;
  mapping.tsc_hz = 1'000'010'000;
  mapping.label_source = "user";
  ReportInput input{&capture, nullptr, &durations};
  input.utc = &mapping;
  const std::string html = export_html(input);
  EXPECT_NE(
      html.find("<tr><th>UTC of time 0</th><td>2026-11-23T16:00:05.250000000Z (PPS on D7, labelled from "
                "user)</td></tr>"),
      std::string::npos);
  EXPECT_EQ(page_data(html)["utc"]["time0"], "2026-11-23T16:00:05.250000000Z");
  { std::ofstream(dir / "report.html") << html; }
  const std::string output =
      run_output("timeout 600 python3 " ETT_SOURCE_DIR "/tests/support/browser_check.py " +
                 (dir / "report.html").string() + " " + dir.string());
  const json result = json::parse(output, nullptr, false);
  ASSERT_TRUE(result.is_object()) << output;
  ASSERT_FALSE(result.contains("error")) << result.dump(1);
  EXPECT_EQ(result["ready"], "1") << result.dump(1);
  for (const json& entry : result["console"])
    EXPECT_TRUE(entry["level"] != "SEVERE" && entry["level"] != "WARNING") << entry.dump();
  // The 20 ms capture in ms: ticks are 16:00:05.25xxxx (six digits), inside the capture's span.
  ASSERT_FALSE(result["timeline_ticks"].empty()) << result.dump(1);
  for (const json& tick : result["timeline_ticks"]) {
    const std::string text = tick.get<std::string>();
    EXPECT_EQ(text.size(), 15u) << text;
    EXPECT_TRUE(text.starts_with("16:00:05.2")) << text;
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}
