// html_test.cpp: the HTML report: its sections and data (parsed back from the page), the open-ended histogram
// bin, the clipped scatter, the bounded size of a million-event report, and the page in real headless
// Chromium through chromedriver (tests/support/browser_check.py): drawn without console errors or network
// requests, and zoomed by its button and by a mouse drag, each of which changes the timeline's range and its
// pixels.
#include "export/html.h"

#include <gtest/gtest.h>

#include <cmath>
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
  EXPECT_NE(html.find("<tr><th><span class=\"label\" title=\"events on probe 1: node &lt;A&gt;\">events on "
                      "probe 1: node &lt;A&gt;</span></th>"),
            std::string::npos);
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

namespace {

// A tick text is round when consecutive ticks are one step apart, the step is 1, 2 or 5 times a power of ten
// and every tick is a multiple of it; the open-ended bin's "≥ X" is the data's and left aside.
::testing::AssertionResult round_ticks(const json& ticks) {
  std::vector<double> values;
  for (const json& tick : ticks) {
    const std::string text = tick.get<std::string>();
    if (text.empty() || text.rfind("≥", 0) == 0) continue;
    values.push_back(std::stod(text));
  }
  if (values.size() < 2) return ::testing::AssertionFailure() << "fewer than 2 ticks: " << ticks;
  const double step = values[1] - values[0];
  const double power = std::pow(10, std::floor(std::log10(step)));
  const double mantissa = step / power;
  if (std::fabs(mantissa - 1) > 1e-6 && std::fabs(mantissa - 2) > 1e-6 && std::fabs(mantissa - 5) > 1e-6)
    return ::testing::AssertionFailure() << "step " << step << " in " << ticks;
  for (size_t i = 0; i < values.size(); ++i) {
    const double k = values[i] / step;
    if (std::fabs(k - std::round(k)) > 1e-6)
      return ::testing::AssertionFailure() << values[i] << " in " << ticks;
    if (i > 0 && std::fabs(values[i] - values[i - 1] - step) > step * 1e-6)
      return ::testing::AssertionFailure() << "uneven at " << values[i] << " in " << ticks;
  }
  return ::testing::AssertionSuccess();
}

// The table rows of the DOM check ({data-key: data-value}) against the numbers of `ett ... --format json`.
void expect_row_matches(const json& row, const json& expected, const std::vector<std::string>& keys,
                        double tolerance, double absolute = 0) {
  for (const std::string& key : keys) {
    ASSERT_TRUE(row.contains(key)) << key << " in " << row;
    ASSERT_TRUE(expected.contains(key)) << key << " in " << expected;
    EXPECT_NEAR(std::stod(row[key].get<std::string>()), expected[key].get<double>(),
                tolerance * std::max(1.0, std::fabs(expected[key].get<double>())) + absolute)
        << key;
  }
}

}  // namespace

// Through the real `ett`: a report of synthetic traffic with a 3,000-character label, a fit and a baseline,
// opened in headless Chromium (tests/export/report_dom_check.py; the screenshots stay in
// build/test-output/report-analyses): the histograms' ticks are round, the label is elided with its whole
// text in a title and the numbers beside it on screen, each 4-bit lane has a code scale
// and (zoomed in) its bus values, and the tables of durations, fit (with the residual per size) and
// comparison hold the numbers of `ett analyze durations --format json` and `ett compare --format json`;
// without --baseline, no comparison table.
TEST(ReportInChromium, AnalysesTablesMatchTheJsonTicksAreRoundLongLabelsElided) {
  if (!have_tool("chromium") || !have_tool("chromedriver") || !have_tool("python3"))
    GTEST_SKIP()
        << "chromium, chromedriver or python3 is not installed (Debian chromium, chromium-driver, python3)";
  const fs::path dir = fs::path(ETT_BIN_DIR).parent_path() / "test-output" / "report-analyses";
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  fs::create_directories(dir);
  const std::string ett = "cd " + dir.string() + " && ETT_DB= " ETT_BIN_DIR "/ett";
  const std::string label(3000, 'n');
  const std::string actions =
      " --db sqlite:t.db --from 1 --to 2 --pair fifo --size-of-code 1=16,2=500,3=1000";
  const std::string commands =
      ett + " synth t.img --events 600 --seed 1 && " + ett + " synth t.img --events 600 --seed 2 && " + ett +
      " load t.img --all --db sqlite:t.db && " + ett + " label --db sqlite:t.db --trace 2 --probe 1 " +
      label + " && " + ett + " report --trace 2 --baseline 1 -o with.html" + actions + " && " + ett +
      " report --trace 2 -o without.html" + actions + " && " + ett + " analyze durations --trace 2" +
      actions + " --fit linear --format json > durations.json && " + ett +
      " compare --db sqlite:t.db --baseline 1 --candidate 2 --from 1 --to 2 --pair fifo --format json "
      "> compare.json";
  ASSERT_EQ(std::system(("(" + commands + ") >/dev/null 2>&1").c_str()), 0) << commands;
  const auto read_json = [&](const char* name) {
    std::ifstream in(dir / name);
    return json::parse(in, nullptr, false);
  };
  const json durations = read_json("durations.json"), compared = read_json("compare.json");
  ASSERT_TRUE(durations.is_object() && compared.is_object());
  const auto check = [&](const char* page) {
    const std::string output =
        run_output("timeout 600 python3 " ETT_SOURCE_DIR "/tests/export/report_dom_check.py " +
                   (dir / page).string() + " " + (dir / fs::path(page).stem()).string());
    return json::parse(output, nullptr, false);
  };
  const json with = check("with.html");
  ASSERT_TRUE(with.is_object()) << with;
  ASSERT_FALSE(with.contains("error")) << with.dump(1);
  EXPECT_EQ(with["ready"], "1");
  for (const json& entry : with["console"])
    EXPECT_TRUE(entry["level"] != "SEVERE" && entry["level"] != "WARNING") << entry.dump();
  EXPECT_TRUE(with["resources"].empty()) << with["resources"];
  for (const char* chart : {"durations", "comparison"})
    EXPECT_TRUE(round_ticks(with["ticks"][chart])) << chart;
  // 2x4: each lane's scale reads 0x0 to 0xf, and the bus values are written where there is room.
  EXPECT_EQ(with["code_scale"], json::parse(R"(["0x0", "0xf", "0x0", "0xf"])"));
  EXPECT_GT(with["bus_values_zoomed"].get<int>(), 0);
  // The long label: elided in the capture table (CSS, the number beside it on screen) and in the legend
  // (cut to 40 characters), its whole text in each title.
  int long_labels = 0;
  for (const json& shown : with["labels"]) {
    if (shown["title"].get<std::string>().find(label) == std::string::npos) continue;
    ++long_labels;
    EXPECT_LT(shown["width"].get<double>(), 600) << shown["text"];
    if (!shown["value_right"].is_null()) {
      EXPECT_LE(shown["value_right"].get<double>(), with["window_width"].get<double>());
      EXPECT_FALSE(shown["value_text"].get<std::string>().empty());
    } else {
      EXPECT_LE(shown["text"].get<std::string>().size(), 45u);
    }
  }
  EXPECT_EQ(long_labels, 2) << with["labels"];
  // The tables hold the analyses' numbers.
  ASSERT_EQ(with["tables"]["durations-table"].size(), 1u) << with["tables"];
  expect_row_matches(with["tables"]["durations-table"][0], durations["durations"],
                     {"count", "mean_ns", "stddev_ns", "min_ns", "p50_ns", "p99_ns", "max_ns"}, 1e-6);
  ASSERT_EQ(with["tables"]["fit-table"].size(), 1u);
  expect_row_matches(with["tables"]["fit-table"][0], durations["fit"],
                     {"intercept_ns", "intercept_stderr_ns", "slope_ns", "slope_stderr_ns", "r2", "points"},
                     1e-5);
  const json& sizes = with["tables"]["fit-sizes-table"];
  ASSERT_EQ(sizes.size(), durations["fit"]["sizes"].size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    expect_row_matches(sizes[i], durations["fit"]["sizes"][i], {"size", "count", "mean_ns", "stddev_ns"},
                       1e-6);
    const double fitted =
        durations["fit"]["intercept_ns"].get<double>() +
        durations["fit"]["slope_ns"].get<double>() * std::stod(sizes[i]["size"].get<std::string>());
    EXPECT_NEAR(std::stod(sizes[i]["residual_ns"].get<std::string>()),
                durations["fit"]["sizes"][i]["mean_ns"].get<double>() - fitted, 0.1);
  }
  const json& stats = with["tables"]["compare-table"];
  ASSERT_EQ(stats.size(), compared["stats"].size());
  for (size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i]["stat"], compared["stats"][i]["stat"]);
    EXPECT_EQ(stats[i]["verdict"], compared["stats"][i]["verdict"]);
    expect_row_matches(stats[i], compared["stats"][i], {"baseline_ns", "candidate_ns", "difference_ns"}, 0,
                       0.051);  // the JSON's 0.1 ns
  }
  EXPECT_TRUE(fs::exists(dir / "with" / "report.png"));

  const json without = check("without.html");
  ASSERT_TRUE(without.is_object()) << without;
  ASSERT_FALSE(without.contains("error")) << without.dump(1);
  EXPECT_TRUE(without["tables"].contains("durations-table"));
  EXPECT_FALSE(without["tables"].contains("compare-table"));
}

// The stored PPS mapping is a table of its numbers, with or without UTC axes.
TEST(ExportHtml, ThePpsMappingIsATable) {
  const Capture capture = actions_capture(5);
  PpsResult mapping;
  mapping.line = 7;
  mapping.utc_second = 1'795'449'605;
  mapping.tsc_hz = 1'000'010'000.5;
  mapping.uncertainty_ppb = 1.25;
  mapping.label_source = "user";
  ReportInput input{&capture};
  input.pps = &mapping;
  const std::string html = export_html(input);
  EXPECT_NE(html.find("<h2>PPS and UTC</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td data-key=\"tsc_hz\" data-value=\"1000010000.5\">1000010000.500 Hz</td>"),
            std::string::npos);
  EXPECT_NE(html.find("2026-11-23T16:00:05.000000000Z (labelled from user)"), std::string::npos);
  EXPECT_EQ(export_html(ReportInput{&capture}).find("pps-table"), std::string::npos);
}
