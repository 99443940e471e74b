// html.cpp: renders the HTML report: tables here, the charts' data as JSON that html.js draws with the
// inlined uPlot.
#include "export/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/probe_layout.h"
#include "export/html_assets.h"

namespace ett::host {

namespace {

constexpr size_t kTimelineMaxEvents = 20000;  // every event up to this many; more are downsampled
constexpr int kTimelineBuckets = 2000;        // time buckets of a downsampled timeline (about 2 per pixel)
constexpr size_t kScatterMaxPoints = 20000;   // every point up to this many; more keep one per grid cell
constexpr int kScatterColumns = 500, kScatterRows = 150;
constexpr int kHistogramBins = 40;
constexpr double kHistogramBodyCoverage = 0.997;  // equal bins up to this quantile, then one open-ended bin

using nlohmann::json;

std::string ns_text(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} µs", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

// Nanoseconds to 0.1 ns in the page's data: finer is below any bound ett quotes, and it keeps the numbers
// short.
double tenth(double ns) {
  return std::round(ns * 10) / 10;
}

// Equal bins up to the 99.7 % quantile and, when the longest value lies more than a bin past it, one
// open-ended last bin (tail) for the rest: a few outliers neither squeeze the body into one bar nor hide.
std::vector<HistogramBin> bins_with_tail(std::vector<double> values, int bins) {
  std::vector<HistogramBin> out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const double lo = values.front(), hi = values.back();
  const double quantile =
      values[std::min(values.size() - 1, static_cast<size_t>(kHistogramBodyCoverage * values.size()))];
  double body_hi = hi;
  if (quantile > lo && hi - quantile > (quantile - lo) / bins) body_hi = quantile;
  const int used = body_hi > lo ? bins : 1;
  const double width = body_hi > lo ? (body_hi - lo) / used : 1.0;
  for (int i = 0; i < used; ++i) out.push_back({lo + i * width, lo + (i + 1) * width, 0});
  if (body_hi < hi) out.push_back({body_hi, hi, 0, true});
  return out;
}

size_t bin_of(const std::vector<HistogramBin>& bins, double v) {
  if (bins.back().tail && v > bins.back().lo_ns) return bins.size() - 1;
  const size_t body = bins.size() - (bins.back().tail ? 1 : 0);
  const double lo = bins.front().lo_ns, width = bins.front().hi_ns - bins.front().lo_ns;
  const double at = width > 0 ? (v - lo) / width : 0;
  return static_cast<size_t>(std::clamp(at, 0.0, static_cast<double>(body - 1)));
}

// A histogram's data: the bin edges, one series of values per side, whether the last bin is open-ended.
json histogram_json(const std::vector<HistogramBin>& bins, const std::string& x_label,
                    const std::string& y_label, json series) {
  json edges = json::array();
  for (const HistogramBin& bin : bins) edges.push_back({tenth(bin.lo_ns), tenth(bin.hi_ns)});
  return {{"edges", edges},
          {"tail", !bins.empty() && bins.back().tail},
          {"x_label", x_label},
          {"y_label", y_label},
          {"series", std::move(series)}};
}

json counts_json(const std::vector<HistogramBin>& bins, const std::string& label) {
  json counts = json::array();
  for (const HistogramBin& bin : bins) counts.push_back(bin.count);
  return json::array({{{"label", label}, {"color", "#1f77b4"}, {"values", counts}}});
}

// A scatter's data, at most kScatterMaxPoints (else one point per cell of a grid over x and log y, stalled
// ones apart, so that every outlier and the shape stay), in x order; clip_ns ends the default view just above
// the bulk.
struct ScatterPoint {
  double x = 0, y = 0;
  bool stalled = false;
};
json scatter_json(std::vector<ScatterPoint> points, const std::string& x_label, const std::string& y_label,
                  bool x_time, size_t& shown) {
  std::stable_sort(points.begin(), points.end(),
                   [](const ScatterPoint& a, const ScatterPoint& b) { return a.x < b.x; });
  std::vector<double> ys;
  for (const ScatterPoint& p : points) ys.push_back(p.y);
  std::sort(ys.begin(), ys.end());
  const auto quantile = [&](double q) {
    return ys[std::min(ys.size() - 1, static_cast<size_t>(q * static_cast<double>(ys.size())))];
  };
  const double low = quantile(0.005), high = quantile(0.995), max = ys.back();
  const double clip = high + std::max(0.25 * (high - low), 0.05 * std::fabs(high));
  const bool clipped = max > clip;
  size_t above = 0;
  for (double y : ys) above += y > clip;
  if (points.size() > kScatterMaxPoints) {
    const double x0 = points.front().x, x1 = points.back().x;
    const bool log_y = ys.front() > 0;
    const double y0 = log_y ? std::log(ys.front()) : ys.front(), y1 = log_y ? std::log(max) : max;
    std::vector<char> taken(static_cast<size_t>(kScatterColumns) * kScatterRows * 2, 0);
    std::vector<ScatterPoint> kept;
    for (const ScatterPoint& p : points) {
      const double fx = x1 > x0 ? (p.x - x0) / (x1 - x0) : 0;
      const double fy = y1 > y0 ? ((log_y ? std::log(p.y) : p.y) - y0) / (y1 - y0) : 0;
      const size_t cell =
          (static_cast<size_t>(std::clamp(fx * kScatterColumns, 0.0, kScatterColumns - 1.0)) * kScatterRows +
           static_cast<size_t>(std::clamp(fy * kScatterRows, 0.0, kScatterRows - 1.0))) *
              2 +
          p.stalled;
      if (!taken[cell]) {
        taken[cell] = 1;
        kept.push_back(p);
      }
    }
    points = std::move(kept);
  }
  json x = json::array(), y = json::array(), stalled = json::array();
  for (const ScatterPoint& p : points) {
    x.push_back(x_time ? tenth(p.x) : p.x);
    y.push_back(tenth(p.y));
    stalled.push_back(p.stalled ? 1 : 0);
  }
  shown = points.size();
  return {{"x", x},
          {"y", y},
          {"stalled", stalled},
          {"x_label", x_label},
          {"y_label", y_label},
          {"x_time", x_time},
          {"clip_ns", clipped ? json(tenth(clip)) : json(nullptr)},
          {"above", clipped ? above : 0},
          {"max_ns", tenth(max)}};
}

double longest_stall(const Capture& capture) {
  double longest = 0;
  for (const StallSpan& stall : capture.stalls) longest = std::max(longest, stall.length_ns);
  return longest;
}

struct TimelineSummary {
  size_t events = 0;
  size_t shown = 0;      // points the page draws
  double bucket_ns = 0;  // the downsampling bucket (0: every event is shown)
};

// A number for a table cell's data-value: what `ett analyze ... --format json` writes for it, to 15
// significant digits (finer than the JSON's own rounding).
std::string raw(double value) {
  return fmt::format("{:.15g}", value);
}

// A table cell holding a time: the text in a readable unit, the number of ns in data-value (tests compare
// it with the JSON of the analyses; a reader can copy it).
std::string ns_cell(const char* key, double ns, const std::string& suffix = "") {
  return fmt::format("<td data-key=\"{}\" data-value=\"{}\">{}{}</td>", key, raw(ns), ns_text(ns), suffix);
}

// "probe 2: node A" with the name given by `ett label`, else "probe 2".
std::string probe_name(const ReportInput& input, int probe) {
  const auto it = input.probe_labels.find(probe);
  return it == input.probe_labels.end() || it->second.empty()
             ? fmt::format("probe {}", probe)
             : fmt::format("probe {}: {}", probe, it->second);
}

// The timeline's data: each probe's code over time (every event, or when there are more than
// kTimelineMaxEvents, the first, lowest, highest and last code of each probe in each of kTimelineBuckets time
// buckets, so that no change of level disappears), and the stall table.
json timeline_json(const ReportInput& input, TimelineSummary& summary) {
  const Capture& capture = *input.capture;
  int probes = std::max(1, capture.info.probe_count);
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  double t0 = 0, t1 = capture.end_ns();
  for (const AnalysisEvent& event : capture.events) {
    t0 = std::min(t0, event.time_ns);
    t1 = std::max(t1, event.time_ns);
  }
  if (t1 <= t0) t1 = t0 + 1;
  summary = {capture.events.size(), 0,
             capture.events.size() > kTimelineMaxEvents ? (t1 - t0) / kTimelineBuckets : 0};
  std::vector<std::vector<size_t>> kept(static_cast<size_t>(probes) + 1);
  if (summary.bucket_ns == 0) {
    for (size_t i = 0; i < capture.events.size(); ++i) kept[capture.events[i].probe].push_back(i);
  } else {
    // Per probe and bucket: the events holding the first, lowest, highest and last code.
    constexpr size_t kNone = SIZE_MAX;
    struct Picks {
      size_t first = kNone, low = kNone, high = kNone, last = kNone;
    };
    std::vector<Picks> picks((static_cast<size_t>(probes) + 1) * kTimelineBuckets);
    for (size_t i = 0; i < capture.events.size(); ++i) {
      const AnalysisEvent& event = capture.events[i];
      const int bucket =
          std::clamp(static_cast<int>((event.time_ns - t0) / summary.bucket_ns), 0, kTimelineBuckets - 1);
      Picks& p = picks[static_cast<size_t>(event.probe) * kTimelineBuckets + bucket];
      if (p.first == kNone) p.first = p.low = p.high = i;
      if (event.code < capture.events[p.low].code) p.low = i;
      if (event.code > capture.events[p.high].code) p.high = i;
      p.last = i;
    }
    for (int probe = 0; probe <= probes; ++probe)
      for (int bucket = 0; bucket < kTimelineBuckets; ++bucket) {
        const Picks& p = picks[static_cast<size_t>(probe) * kTimelineBuckets + bucket];
        if (p.first == kNone) continue;
        size_t chosen[] = {p.first, p.low, p.high, p.last};
        std::sort(std::begin(chosen), std::end(chosen));
        for (size_t k = 0; k < 4; ++k)
          if (k == 0 || chosen[k] != chosen[k - 1]) kept[static_cast<size_t>(probe)].push_back(chosen[k]);
      }
  }
  const std::optional<ProbeLayout> layout = ProbeLayout::from_name(capture.info.layout);
  json lanes = json::array();
  for (int probe = 1; probe <= probes; ++probe) {
    json t = json::array(), c = json::array();
    int max_code = 0;
    for (size_t i : kept[static_cast<size_t>(probe)]) {
      t.push_back(tenth(capture.events[i].time_ns));
      c.push_back(capture.events[i].code);
      max_code = std::max<int>(max_code, capture.events[i].code);
    }
    summary.shown += kept[static_cast<size_t>(probe)].size();
    // The lane's code scale: every code the layout allows (2x4: 0 to 0xf), or the highest seen without one.
    const int bits = layout ? layout->bits_per_probe() : 0;
    lanes.push_back({{"probe", probe},
                     {"name", probe_name(input, probe)},
                     {"max_code", max_code},
                     {"bits", bits},
                     {"full_code", bits > 0 ? (1 << bits) - 1 : std::max(1, max_code)},
                     {"t", t},
                     {"c", c}});
  }
  json stalls = json::array();
  for (const StallSpan& stall : capture.stalls)
    stalls.push_back({tenth(stall.start_ns), tenth(stall.length_ns)});
  return {{"t0", tenth(t0)}, {"t1", tenth(t1)}, {"probes", lanes}, {"stalls", stalls}};
}

// The page's data as a script element's text: no "<" at all (it is escaped in JSON strings, the only place it
// can be), so that neither "</script>" nor "<!--" in a name can end or change the element.
std::string data_script(const json& data) {
  const std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// A message of the text tools in HTML: escaped, each `quoted` command as <code>.
std::string code_spans(const std::string& text) {
  std::string out;
  bool open = false;
  size_t from = 0;
  for (size_t at = text.find('`'); at != std::string::npos; at = text.find('`', from)) {
    out += html_escape(text.substr(from, at - from)) + (open ? "</code>" : "<code>");
    open = !open;
    from = at + 1;
  }
  return out + html_escape(text.substr(from)) + (open ? "</code>" : "");
}

}  // namespace

std::string export_html(const ReportInput& input) {
  const Capture& capture = *input.capture;
  const CaptureInfo& info = capture.info;
  const std::string title = info.name.empty() ? "ETT capture" : info.name;
  json data = json::object();
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>ETT report: {}</title>\n", html_escape(title));
  out += fmt::format("<style>\n{}\n</style>\n<style>\n{}</style>\n</head>\n<body>\n", kUplotCss, kReportCss);
  out += fmt::format("<h1>ETT report: {}</h1>\n", html_escape(title));

  std::map<int, uint64_t> per_probe;
  for (const AnalysisEvent& event : capture.events) per_probe[event.probe]++;
  out += "<h2>Capture</h2>\n<table>\n";
  auto row = [&](const std::string& key, const std::string& value) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(key), html_escape(value));
  };
  row("captured at", info.captured_at.empty() ? "unknown" : info.captured_at);
  if (input.utc && input.utc->utc_second && info.tsc_hz) {
    // The axes place a capture time t (ns) at UTC origin + t * scale: the capture's calibration against the
    // PPS's true seconds.
    const UtcNs origin = input.utc->utc_of_capture_ns(0, info.capture_start_tsc, info.tsc_hz);
    data["utc"] = {{"second", origin.second},
                   {"ns", origin.nanosecond},
                   {"scale", static_cast<double>(info.tsc_hz) / input.utc->tsc_hz},
                   {"time0", format_iso_utc(origin)}};
    row("UTC of time 0", fmt::format("{} (PPS on D{}, labelled from {})", format_iso_utc(origin),
                                     input.utc->line, input.utc->label_source));
  }
  row("mode", info.mode);
  row("layout", info.layout);
  row("events", fmt::format("{}", capture.events.size()));
  // A long label is elided to one line (the whole of it in the title, shown on hover), so that the numbers
  // stay in view.
  for (const auto& [probe, count] : per_probe) {
    const std::string key = html_escape(fmt::format("events on {}", probe_name(input, probe)));
    out += fmt::format("<tr><th><span class=\"label\" title=\"{}\">{}</span></th><td>{}</td></tr>\n", key,
                       key, count);
  }
  row("duration", ns_text(capture.end_ns()));
  row("TSC rate", fmt::format("{} Hz", info.tsc_hz));
  if (!info.cpu_brand.empty()) row("CPU", info.cpu_brand);
  if (info.typical_check_ns > 0) {  // recorded by the kernel (session format 2)
    row("stalls", info.stall_count == 0 || capture.stalls.empty()
                      ? std::string("none: the capture loop was never held up")
                      : fmt::format("{}, the longest {} (red bands on the timeline)", info.stall_count,
                                    ns_text(longest_stall(capture))));
    row("check interval (1024 polls)", fmt::format("typical {}, longest {}", ns_text(info.typical_check_ns),
                                                   ns_text(info.longest_check_ns)));
  }
  out += "</table>\n";

  out += "<h2>Precision</h2>\n";
  if (input.precision) {
    const PrecisionResult& p = *input.precision;
    out += fmt::format(
        "<p>{} loop steps; epsilon = 1 / {} Hz = {:.3f} ns.</p>\n<table>\n<tr><th>coverage</th>"
        "<th>tau</th><th>epsilon</th><th>pi = tau + epsilon</th><th>min inter-arrival per probe"
        "</th></tr>\n",
        p.steps, p.tsc_hz, p.epsilon_ns);
    for (const CoverageLevel& level : p.levels)
      out += fmt::format(
          "<tr><td>{:.1f} %</td><td>{:.1f} ns</td><td>{:.3f} ns</td><td>{:.1f} ns</td><td>{:.1f} ns"
          "</td></tr>\n",
          level.coverage * 100, level.tau_ns, level.epsilon_ns, level.pi_ns, level.min_interarrival_ns);
    out += "</table>\n<h3>Loop-step distribution</h3>\n<div class=\"chart\" id=\"chart-steps\"></div>\n";
    if (!p.histogram.empty()) {
      data["steps"] =
          histogram_json(p.histogram, "loop-step time", "loop steps", counts_json(p.histogram, "loop steps"));
      if (p.histogram.back().tail)
        out += fmt::format(
            "<p class=\"note\">The last bin is open-ended: the {} loop steps of at least {} (past the 99.7 % "
            "quantile, "
            "the longest {}).</p>\n",
            p.histogram.back().count, ns_text(p.histogram.back().lo_ns), ns_text(p.histogram.back().hi_ns));
    }
  } else {
    out += fmt::format(
        "<p class=\"note\">No precision known for this CPU: {}; then run <code>ett report</code> "
        "again.</p>\n",
        code_spans(kStorePrecisionSteps));
  }

  TimelineSummary shown;
  data["timeline"] = timeline_json(input, shown);
  out += "<h2>Timeline</h2>\n<div class=\"chart\" id=\"chart-timeline\"></div>\n";
  out += "<p class=\"note\">Each probe's code over time (its lane shows the code's level)";
  if (!capture.stalls.empty())
    out += fmt::format("; the {} records of the capture's stall table are red bands across the lanes",
                       capture.stalls.size());
  out += ".</p>\n";
  if (shown.bucket_ns > 0)
    out += fmt::format(
        "<p class=\"note\" id=\"timeline-downsampled\">Downsampled: {} points of {} events, the first, "
        "lowest, "
        "highest and last code of each probe in each of {} time buckets of {}; zoomed in, no detail finer "
        "than a "
        "bucket shows (<code>ett export</code> writes every event).</p>\n",
        shown.shown, shown.events, kTimelineBuckets, ns_text(shown.bucket_ns));

  out += "<h2>Durations</h2>\n";
  if (input.durations && !input.durations->actions.empty()) {
    const DurationsResult& d = *input.durations;
    const Summary& s = d.summary;
    // ±pi on the statistics only when it holds for every action (no stall touches one).
    const std::string pm = d.pi_ns > 0 && d.stalled == 0 ? fmt::format(" ± {}", ns_text(d.pi_ns)) : "";
    if (d.stalled)
      out += fmt::format(
          "<p>The ± {} bound (pi) holds for {} of {} actions; {} touch a stall of the capture "
          "(late by up to the stall).</p>\n",
          ns_text(d.pi_ns), d.actions.size() - d.stalled, d.actions.size(), d.stalled);
    out += fmt::format(
        "<p>Actions from probe {} to probe {}: {} paired, {} unmatched starts, {} unmatched ends, "
        "{} out of order.</p>\n<table id=\"durations-table\">\n<tr><th>count</th><th>mean</th><th>stddev</th>"
        "<th>min</th><th>p50</th><th>p99</th><th>max</th><th>bound (pi)</th><th>actions a stall touched</th>"
        "</tr>\n",
        endpoint_text(d.from), endpoint_text(d.to), d.actions.size(), d.unmatched_starts.size(),
        d.unmatched_ends.size(), d.out_of_order);
    out += fmt::format(
        "<tr><td data-key=\"count\" data-value=\"{}\">{}</td>{}{}{}{}{}{}<td data-key=\"pi_ns\" "
        "data-value=\"{}\">{}</td><td data-key=\"stalled_actions\" data-value=\"{}\">{}</td></tr>\n"
        "</table>\n",
        s.count, s.count, ns_cell("mean_ns", s.mean, pm), ns_cell("stddev_ns", s.stddev),
        ns_cell("min_ns", s.min, pm), ns_cell("p50_ns", s.p50, pm), ns_cell("p99_ns", s.p99, pm),
        ns_cell("max_ns", s.max, pm), d.pi_ns > 0 ? raw(d.pi_ns) : "",
        d.pi_ns > 0 ? "± " + ns_text(d.pi_ns) : "unknown (no calibration)", d.stalled, d.stalled);
    // The stall flags: each action a stall touched, with its wider bound (the first kStalledRowsShown).
    if (d.stalled) {
      constexpr size_t kStalledRowsShown = 20;
      out += fmt::format(
          "<h3>Actions a stall touched</h3>\n<table id=\"stalled-table\">\n<tr><th>start seq</th><th>end "
          "seq</th><th>start</th><th>duration</th><th>stall</th><th>bound (pi + stall)</th></tr>\n");
      size_t shown_rows = 0;
      for (const Action& action : d.actions) {
        if (action.stall_ns <= 0) continue;
        if (shown_rows++ == kStalledRowsShown) break;
        out += fmt::format(
            "<tr><td data-key=\"start_seq\" data-value=\"{}\">{}</td><td>{}</td>{}{}{}{}</tr>\n",
            action.start_seq, action.start_seq, action.end_seq, ns_cell("start_ns", action.start_ns),
            ns_cell("duration_ns", action.duration_ns), ns_cell("stall_ns", action.stall_ns),
            action.bound_ns > 0 ? ns_cell("bound_ns", action.bound_ns) : std::string("<td>unknown</td>"));
      }
      out += "</table>\n";
      if (d.stalled > kStalledRowsShown)
        out += fmt::format(
            "<p class=\"note\">The first {} of {} (<code>ett analyze durations</code> lists "
            "every one).</p>\n",
            kStalledRowsShown, d.stalled);
    }
    // Sized once: growing them by doubling held an old and a new copy (hundreds of MB at 10 M events).
    std::vector<double> values;
    std::vector<ScatterPoint> points;
    values.reserve(d.actions.size());
    points.reserve(d.actions.size());
    for (const Action& action : d.actions) {
      values.push_back(action.duration_ns);
      points.push_back({action.start_ns, action.duration_ns, action.stall_ns > 0});
    }
    std::vector<HistogramBin> bins = bins_with_tail(values, kHistogramBins);
    for (double v : values) bins[bin_of(bins, v)].count++;
    data["durations"] = histogram_json(bins, "action duration", "actions", counts_json(bins, "actions"));
    out += "<div class=\"chart\" id=\"chart-durations\"></div>\n";
    if (bins.back().tail)
      out += fmt::format(
          "<p class=\"note\">The last bin is open-ended: the {} actions of at least {} (past the 99.7 % "
          "quantile, "
          "the longest {}).</p>\n",
          bins.back().count, ns_text(bins.back().lo_ns), ns_text(bins.back().hi_ns));
    size_t scatter_shown = 0;
    data["duration_time"] = scatter_json(std::move(points), "action start", "duration", true, scatter_shown);
    out += "<h3>Duration over time</h3>\n<div class=\"chart\" id=\"chart-duration-time\"></div>\n";
    if (scatter_shown < d.actions.size())
      out += fmt::format(
          "<p class=\"note\">{} of {} actions drawn: one per cell of a {}×{} grid over time and log "
          "duration, "
          "so that the shape and every outlier stay.</p>\n",
          scatter_shown, d.actions.size(), kScatterColumns, kScatterRows);
  } else {
    out += "<p class=\"note\">No actions: give <code>--from P[:C] --to P[:C]</code>.</p>\n";
  }

  out += "<h2>Latency model</h2>\n";
  if (input.fit) {
    const LinearFit& f = input.fit->fit;
    out += fmt::format(
        "<p>duration = ({:.1f} ± {:.1f}) ns + ({:.4f} ± {:.4f}) ns × size; R² = {:.5f}; {} actions.</p>\n"
        "<table id=\"fit-table\">\n<tr><th>intercept</th><th>± (standard error)</th><th>slope, ns per "
        "size</th>"
        "<th>± (standard error)</th><th>R²</th><th>actions</th></tr>\n<tr>{}{}<td data-key=\"slope_ns\" "
        "data-value=\"{}\">{:.6g}</td><td data-key=\"slope_stderr_ns\" data-value=\"{}\">{:.2g}</td>"
        "<td data-key=\"r2\" data-value=\"{}\">{:.6f}</td><td data-key=\"points\" data-value=\"{}\">{}</td>"
        "</tr>\n</table>\n",
        f.intercept_ns, f.intercept_stderr_ns, f.slope_ns, f.slope_stderr_ns, f.r2, f.points,
        ns_cell("intercept_ns", f.intercept_ns), ns_cell("intercept_stderr_ns", f.intercept_stderr_ns),
        raw(f.slope_ns), f.slope_ns, raw(f.slope_stderr_ns), f.slope_stderr_ns, raw(f.r2), f.r2, f.points,
        f.points);
    // Per size: the measured mean against the line's value there; the residual is their difference.
    out +=
        "<table id=\"fit-sizes-table\">\n<tr><th>size</th><th>count</th><th>mean</th><th>stddev</th>"
        "<th>fitted</th><th>residual (mean - fitted)</th></tr>\n";
    for (const SizeRow& size : input.fit->sizes) {
      const double fitted = f.intercept_ns + f.slope_ns * size.size;
      out += fmt::format(
          "<tr><td data-key=\"size\" data-value=\"{}\">{}</td><td data-key=\"count\" "
          "data-value=\"{}\">{}</td>{}{}{}{}</tr>\n",
          raw(size.size), size.size, size.duration.count, size.duration.count,
          ns_cell("mean_ns", size.duration.mean), ns_cell("stddev_ns", size.duration.stddev),
          ns_cell("fitted_ns", fitted), ns_cell("residual_ns", size.duration.mean - fitted));
    }
    out += "</table>\n<div class=\"chart\" id=\"chart-fit\"></div>\n";
    std::vector<ScatterPoint> points;
    points.reserve(std::min(input.fit->x.size(), input.fit->y.size()));
    for (size_t i = 0; i < input.fit->x.size() && i < input.fit->y.size(); ++i)
      points.push_back({input.fit->x[i], input.fit->y[i], false});
    if (!points.empty()) {
      size_t fit_shown = 0;
      json fit = scatter_json(std::move(points), "size", "duration", false, fit_shown);
      fit["line"] = {f.intercept_ns, f.slope_ns};
      data["fit"] = std::move(fit);
      if (fit_shown < input.fit->x.size())
        out += fmt::format("<p class=\"note\">{} of {} actions drawn (one per grid cell).</p>\n", fit_shown,
                           input.fit->x.size());
    }
  } else {
    out += "<p class=\"note\">No fit: give <code>--size-of-code CODE=SIZE,...</code> with the actions.</p>\n";
  }
  if (input.comparison) {
    const ReportComparison& c = *input.comparison;
    std::string traces;
    for (int64_t id : c.baseline_traces) traces += fmt::format("{}{}", traces.empty() ? "" : ", ", id);
    out += fmt::format(
        "<h2>Comparison</h2>\n<p>This trace (the candidate, {} actions) against baseline trace{} {} ({} "
        "actions); "
        "actions a stall touched are left out ({} and {}). Bounds on the difference (candidate - baseline) "
        "from "
        "a bootstrap of 2000 resamples, seed 1, each bound at 95 % confidence; differences within ±pi are no "
        "change.</p>\n<table "
        "id=\"compare-table\">\n<tr><th>statistic</th><th>baseline</th><th>candidate</th><th>difference</th>"
        "<th>bounds</th><th>verdict</th></tr>\n",
        c.candidate_ns.size(), c.baseline_traces.size() > 1 ? "s" : "", traces, c.baseline_ns.size(),
        c.result.baseline.stalled, c.result.candidate.stalled);
    for (const StatComparison& s : c.result.stats)
      out += fmt::format(
          "<tr><td data-key=\"stat\" data-value=\"{}\">{}</td>{}{}{}<td data-key=\"bounds\" "
          "data-value=\"{},{}\">[{}, {}]</td><td data-key=\"verdict\" data-value=\"{}\">{}</td></tr>\n",
          compare_stat_name(s.stat), compare_stat_name(s.stat), ns_cell("baseline_ns", s.baseline_ns),
          ns_cell("candidate_ns", s.candidate_ns), ns_cell("difference_ns", s.difference_ns), raw(s.lower_ns),
          raw(s.upper_ns), ns_text(s.lower_ns), ns_text(s.upper_ns), verdict_name(s.verdict),
          verdict_name(s.verdict));
    out += "</table>\n";
    if (c.result.stats.empty())
      out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(c.result.gate.reason));
    std::vector<double> all(c.baseline_ns);
    all.insert(all.end(), c.candidate_ns.begin(), c.candidate_ns.end());
    if (!all.empty()) {
      const std::vector<HistogramBin> bins = bins_with_tail(all, kHistogramBins);
      // Fractions of each side, so that sides of different sizes compare.
      auto fractions = [&](const std::vector<double>& values) {
        std::vector<double> counts(bins.size(), 0);
        for (double v : values) counts[bin_of(bins, v)] += 1;
        json out_values = json::array();
        for (double count : counts)
          out_values.push_back(values.empty() ? 0.0 : std::round(count / values.size() * 1e6) / 1e6);
        return out_values;
      };
      json series = json::array();
      series.push_back({{"label", fmt::format("baseline ({} actions)", c.baseline_ns.size())},
                        {"color", "#7f7f7f"},
                        {"values", fractions(c.baseline_ns)}});
      series.push_back({{"label", fmt::format("candidate ({} actions)", c.candidate_ns.size())},
                        {"color", "#1f77b4"},
                        {"values", fractions(c.candidate_ns)}});
      data["comparison"] = histogram_json(bins, "action duration", "fraction of the side's actions", series);
      out += "<div class=\"chart\" id=\"chart-comparison\"></div>\n";
    }
  }
  if (input.pps) {
    const PpsResult& pps = *input.pps;
    out += fmt::format(
        "<h2>PPS and UTC</h2>\n<p>The TSC against a receiver's pulse per second on D{} (<code>ett analyze "
        "pps</code>): capture times map to UTC as UTC(tsc) = second of pulse 0 + (tsc - anchor) / rate.</p>\n"
        "<table id=\"pps-table\">\n",
        pps.line);
    auto pps_row = [&](const char* key, const std::string& name, const std::string& value,
                       const std::string& text) {
      out += fmt::format("<tr><th>{}</th><td data-key=\"{}\" data-value=\"{}\">{}</td></tr>\n", name, key,
                         html_escape(value), html_escape(text));
    };
    pps_row("line", "line", fmt::format("D{}", pps.line), fmt::format("D{}", pps.line));
    pps_row("tsc_hz", "TSC rate against true seconds", raw(pps.tsc_hz), fmt::format("{:.3f} Hz", pps.tsc_hz));
    pps_row("uncertainty_ppb", "its uncertainty", raw(pps.uncertainty_ppb),
            fmt::format("± {:.3f} Hz ({:.3f} ppb)", pps.tsc_hz_stderr, pps.uncertainty_ppb));
    if (pps.header_tsc_hz > 0)
      pps_row("calibration_error_ppm", "the capture's own calibration, off by",
              raw((pps.header_tsc_hz - pps.tsc_hz) / pps.tsc_hz * 1e6),
              fmt::format("{:.3f} ppm ({:.0f} Hz)", (pps.header_tsc_hz - pps.tsc_hz) / pps.tsc_hz * 1e6,
                          pps.header_tsc_hz));
    pps_row("anchor_tsc", "anchor (TSC of pulse 0)", raw(pps.anchor_tsc),
            fmt::format("{:.1f}", pps.anchor_tsc));
    if (!pps.pulses.empty())
      pps_row("jitter_p99_ns", "jitter (|residual| of the pulses)", raw(pps.jitter_p99_ns),
              fmt::format("p50 {}, p99 {}, max {}", ns_text(pps.jitter_p50_ns), ns_text(pps.jitter_p99_ns),
                          ns_text(pps.jitter_max_ns)));
    pps_row("utc_second", "UTC of pulse 0",
            pps.utc_second ? fmt::format("{}", *pps.utc_second) : std::string(),
            pps.utc_second ? fmt::format("{} (labelled from {})", format_iso_utc(UtcNs{*pps.utc_second, 0}),
                                         pps.label_source)
                           : "unlabelled: give `ett analyze pps --utc-at-edge N=ISO`");
    out += "</table>\n";
    if (!input.utc)
      out +=
          "<p class=\"note\">The time axes read UTC time of day with <code>ett report --time "
          "utc</code>.</p>\n";
  }
  out += fmt::format(
      "<noscript><p class=\"note\">The charts need JavaScript (inline in this file; nothing is fetched).</p>"
      "</noscript>\n<p class=\"note\">Charts drawn by uPlot {} (MIT licence, Leon Sorokin), inlined in this "
      "file.</p>\n",
      kUplotVersion);
  out += "<script type=\"application/json\" id=\"ett-data\">" + data_script(data) + "</script>\n";
  out += fmt::format("<script>\n{}\n</script>\n<script>\n{}</script>\n", kUplotJs, kReportJs);
  out += "<p class=\"note\">Generated by ett " ETT_VERSION ".</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace ett::host
