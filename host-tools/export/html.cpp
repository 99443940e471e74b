// html.cpp: renders the HTML report; every chart is inline SVG drawn here.
#include "export/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace ett::host {

namespace {

constexpr int kWidth = 1000;
constexpr size_t kMaxTimelineEvents = 20000;  // more ticks than pixels only makes the page heavy
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                               "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string ns_text(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} µs", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

// A bar chart of counts over [lo, hi) bins.
std::string bar_chart(const std::vector<HistogramBin>& bins, const std::string& x_label) {
  const int height = 220, left = 60, bottom = 40, plot_w = kWidth - left - 20, plot_h = height - bottom - 10;
  uint64_t top = 1;
  for (const HistogramBin& bin : bins) top = std::max(top, bin.count);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n",
      kWidth, height);
  const double bar_w = bins.empty() ? 0 : static_cast<double>(plot_w) / static_cast<double>(bins.size());
  for (size_t i = 0; i < bins.size(); ++i) {
    const double h = static_cast<double>(bins[i].count) / static_cast<double>(top) * plot_h;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#1f77b4\">"
        "<title>{} – {}: {}</title></rect>\n",
        left + i * bar_w, 10 + plot_h - h, std::max(1.0, bar_w - 1), h, ns_text(bins[i].lo_ns),
        ns_text(bins[i].hi_ns), bins[i].count);
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", left,
                     10 + plot_h, left + plot_w);
  if (!bins.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", left, height - 22,
                       ns_text(bins.front().lo_ns));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n",
                       left + plot_w, height - 22, ns_text(bins.back().hi_ns));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     left + plot_w / 2, height - 6, html_escape(x_label));
  svg +=
      fmt::format("<text x=\"{}\" y=\"20\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", left - 6, top);
  return svg + "</svg>\n";
}

std::vector<HistogramBin> bin_values(const std::vector<double>& values, int bins) {
  std::vector<HistogramBin> out;
  if (values.empty()) return out;
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const double lo = *lo_it, hi = *hi_it;
  const int used = hi > lo ? bins : 1;
  const double width = hi > lo ? (hi - lo) / used : 1.0;
  for (int i = 0; i < used; ++i) out.push_back({lo + i * width, lo + (i + 1) * width, 0});
  for (double v : values)
    out[static_cast<size_t>(std::clamp(static_cast<int>((v - lo) / width), 0, used - 1))].count++;
  return out;
}

// Two duration distributions over the same bins, side by side in each bin: baseline grey, candidate blue.
std::string comparison_chart(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  const int height = 240, left = 60, bottom = 40, plot_w = kWidth - left - 20, plot_h = height - bottom - 30,
            bins = 40;
  std::vector<double> all(baseline);
  all.insert(all.end(), candidate.begin(), candidate.end());
  const std::vector<HistogramBin> edges = bin_values(all, bins);
  auto count = [&](const std::vector<double>& values) {
    std::vector<uint64_t> counts(edges.size(), 0);
    if (edges.empty()) return counts;
    const double lo = edges.front().lo_ns, width = edges.front().hi_ns - edges.front().lo_ns;
    for (double v : values)
      counts[static_cast<size_t>(
          std::clamp(static_cast<int>((v - lo) / width), 0, static_cast<int>(edges.size()) - 1))]++;
    return counts;
  };
  const std::vector<uint64_t> b = count(baseline), c = count(candidate);
  // Fractions of each side, so that sides of different sizes compare.
  double top = 1e-9;
  for (size_t i = 0; i < edges.size(); ++i)
    top = std::max({top, b[i] / std::max(1.0, static_cast<double>(baseline.size())),
                    c[i] / std::max(1.0, static_cast<double>(candidate.size()))});
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n"
      "<rect x=\"{}\" y=\"6\" width=\"12\" height=\"12\" fill=\"#999\"/><text x=\"{}\" y=\"16\" "
      "font-size=\"12\">baseline ({} actions)</text>\n"
      "<rect x=\"{}\" y=\"6\" width=\"12\" height=\"12\" fill=\"#1f77b4\"/><text x=\"{}\" y=\"16\" "
      "font-size=\"12\">candidate ({} actions)</text>\n",
      kWidth, height, left, left + 16, baseline.size(), left + 200, left + 216, candidate.size());
  const double bin_w = edges.empty() ? 0 : static_cast<double>(plot_w) / static_cast<double>(edges.size());
  const int top_y = 30;
  for (size_t i = 0; i < edges.size(); ++i) {
    const double fb = b[i] / std::max(1.0, static_cast<double>(baseline.size()));
    const double fc = c[i] / std::max(1.0, static_cast<double>(candidate.size()));
    const double hb = fb / top * plot_h, hc = fc / top * plot_h, half = std::max(0.5, bin_w / 2 - 0.5);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#999\"><title>baseline "
        "{} – {}: {}</title></rect>\n",
        left + i * bin_w, top_y + plot_h - hb, half, hb, ns_text(edges[i].lo_ns), ns_text(edges[i].hi_ns),
        b[i]);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#1f77b4\"><title>candidate "
        "{} – {}: {}</title></rect>\n",
        left + i * bin_w + half, top_y + plot_h - hc, half, hc, ns_text(edges[i].lo_ns),
        ns_text(edges[i].hi_ns), c[i]);
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", left,
                     top_y + plot_h, left + plot_w);
  if (!edges.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", left, height - 22,
                       ns_text(edges.front().lo_ns));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n",
                       left + plot_w, height - 22, ns_text(edges.back().hi_ns));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">action duration (bar height: the "
      "side's fraction of its actions)</text>\n",
      left + plot_w / 2, height - 6);
  return svg + "</svg>\n";
}

double longest_stall(const Capture& capture) {
  double longest = 0;
  for (const StallSpan& stall : capture.stalls) longest = std::max(longest, stall.length_ns);
  return longest;
}

std::string timeline(const Capture& capture) {
  int probes = std::max(1, capture.info.probe_count);
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  const int lane = 36, left = 80, right = 20, plot_w = kWidth - left - right, height = probes * lane + 40;
  double t0 = 0, t1 = capture.end_ns();
  for (const AnalysisEvent& event : capture.events) {
    t0 = std::min(t0, event.time_ns);
    t1 = std::max(t1, event.time_ns);
  }
  if (t1 <= t0) t1 = t0 + 1;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n",
      kWidth, height);
  for (int p = 1; p <= probes; ++p) {
    const int y = 10 + (p - 1) * lane;
    svg += fmt::format("<text x=\"8\" y=\"{}\" font-size=\"13\">probe {}</text>\n", y + lane / 2 + 4, p);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ccc\"/>\n", left,
                       y + lane - 4, left + plot_w);
  }
  // The capture's stalls: a red band across every lane over each stall record's window (at least 2 px wide,
  // so that a short one stays visible); events in or just after one may be stamped late.
  for (const StallSpan& stall : capture.stalls) {
    const double x0 = left + (stall.start_ns - t0) / (t1 - t0) * plot_w;
    const double x1 = left + (stall.start_ns + stall.length_ns - t0) / (t1 - t0) * plot_w;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"6\" width=\"{:.1f}\" height=\"{}\" fill=\"#d62728\" "
        "fill-opacity=\"0.35\"><title>stall: {} at {}</title></rect>\n",
        x0, std::max(2.0, x1 - x0), probes * lane, ns_text(stall.length_ns), ns_text(stall.start_ns));
  }
  const size_t step = capture.events.size() / kMaxTimelineEvents + 1;
  for (size_t i = 0; i < capture.events.size(); i += step) {
    const AnalysisEvent& event = capture.events[i];
    const double x = left + (event.time_ns - t0) / (t1 - t0) * plot_w;
    const int y = 10 + (std::max(1, static_cast<int>(event.probe)) - 1) * lane;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-width=\"1.5\"/>\n",
        x, y + 4, y + lane - 4, kColors[(std::max(1, static_cast<int>(event.probe)) - 1) % 8]);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", left, height - 10, ns_text(t0));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n",
                     left + plot_w, height - 10, ns_text(t1));
  if (step > 1)
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">every {}th event "
        "shown</text>\n",
        left + plot_w / 2, height - 10, step);
  return svg + "</svg>\n";
}

std::string fit_plot(const FitResult& fit) {
  const int height = 320, left = 70, bottom = 40, top_pad = 10, plot_w = kWidth - left - 20,
            plot_h = height - bottom - top_pad;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (!fit.x.empty()) {
    x0 = *std::min_element(fit.x.begin(), fit.x.end());
    x1 = *std::max_element(fit.x.begin(), fit.x.end());
    y0 = *std::min_element(fit.y.begin(), fit.y.end());
    y1 = *std::max_element(fit.y.begin(), fit.y.end());
  }
  for (double x : {x0, x1}) {
    y0 = std::min(y0, fit.fit.intercept_ns + fit.fit.slope_ns * x);
    y1 = std::max(y1, fit.fit.intercept_ns + fit.fit.slope_ns * x);
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * plot_w; };
  auto py = [&](double y) { return top_pad + plot_h - (y - y0) / (y1 - y0) * plot_h; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n",
      kWidth, height);
  const size_t step = fit.x.size() / kMaxTimelineEvents + 1;
  for (size_t i = 0; i < fit.x.size(); i += step)
    svg +=
        fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#1f77b4\" fill-opacity=\"0.5\"/>\n",
                    px(fit.x[i]), py(fit.y[i]));
  svg += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#d62728\" "
      "stroke-width=\"2\"/>\n",
      px(x0), py(fit.fit.intercept_ns + fit.fit.slope_ns * x0), px(x1),
      py(fit.fit.intercept_ns + fit.fit.slope_ns * x1));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">size {}</text>\n", left, height - 10, x0);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">size {}</text>\n",
                     left + plot_w, height - 10, x1);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", left - 4,
                     top_pad + 12, ns_text(y1));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n", left - 4,
                     top_pad + plot_h, ns_text(y0));
  return svg + "</svg>\n";
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

std::string export_html(const ReportInput& input) {
  const Capture& capture = *input.capture;
  const CaptureInfo& info = capture.info;
  const std::string title = info.name.empty() ? "ETT capture" : info.name;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>ETT report: {}</title>\n", html_escape(title));
  out +=
      "<style>body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
      "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #bbb;padding:4px 10px;"
      "text-align:right}th{background:#eee}td:first-child,th:first-child{text-align:left}"
      "h2{margin-top:28px;border-bottom:2px solid #1f77b4}.note{color:#666}</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>ETT report: {}</h1>\n", html_escape(title));

  std::map<int, uint64_t> per_probe;
  for (const AnalysisEvent& event : capture.events) per_probe[event.probe]++;
  out += "<h2>Capture</h2>\n<table>\n";
  auto row = [&](const std::string& key, const std::string& value) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html_escape(key), html_escape(value));
  };
  row("captured at", info.captured_at.empty() ? "unknown" : info.captured_at);
  row("mode", info.mode);
  row("layout", info.layout);
  row("events", fmt::format("{}", capture.events.size()));
  for (const auto& [probe, count] : per_probe)
    row(fmt::format("events on probe {}", probe), fmt::format("{}", count));
  row("duration", ns_text(capture.end_ns()));
  row("TSC rate", fmt::format("{} Hz", info.tsc_hz));
  if (!info.cpu_brand.empty()) row("CPU", info.cpu_brand);
  if (info.typical_check_ns > 0) {  // recorded by the kernel (session format 2)
    row("stalls",
        fmt::format("{} (the longest record of the stall table {}); red on the timeline", info.stall_count,
                    capture.stalls.empty() ? "-" : ns_text(longest_stall(capture))));
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
    out += "</table>\n<h3>Loop-step distribution</h3>\n" + bar_chart(p.histogram, "loop-step time");
  } else {
    out +=
        "<p class=\"note\">No precision known for this machine: run <code>ett analyze precision</code> on a "
        "mode=calibrate capture from the same PC.</p>\n";
  }

  out += "<h2>Timeline</h2>\n" + timeline(capture);

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
        "{} out of order.</p>\n<table>\n<tr><th>count</th><th>mean</th><th>stddev</th><th>min</th>"
        "<th>p50</th><th>p99</th><th>max</th></tr>\n",
        endpoint_text(d.from), endpoint_text(d.to), d.actions.size(), d.unmatched_starts.size(),
        d.unmatched_ends.size(), d.out_of_order.size());
    out += fmt::format(
        "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}{}</td><td>{}{}</td><td>{}{}</td><td>{}{}</td>"
        "</tr>\n</table>\n",
        s.count, ns_text(s.mean), pm, ns_text(s.stddev), ns_text(s.min), pm, ns_text(s.p50), pm,
        ns_text(s.p99), pm, ns_text(s.max), pm);
    std::vector<double> values;
    for (const Action& action : d.actions) values.push_back(action.duration_ns);
    out += bar_chart(bin_values(values, 40), "action duration");
  } else {
    out += "<p class=\"note\">No actions: give <code>--from P[:C] --to P[:C]</code>.</p>\n";
  }

  out += "<h2>Latency model</h2>\n";
  if (input.fit) {
    const LinearFit& f = input.fit->fit;
    out += fmt::format(
        "<p>duration = ({:.1f} ± {:.1f}) ns + ({:.4f} ± {:.4f}) ns × size; R² = {:.5f}; {} actions."
        "</p>\n<table>\n<tr><th>size</th><th>count</th><th>mean</th><th>stddev</th></tr>\n",
        f.intercept_ns, f.intercept_stderr_ns, f.slope_ns, f.slope_stderr_ns, f.r2, f.points);
    for (const SizeRow& size : input.fit->sizes)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", size.size,
                         size.duration.count, ns_text(size.duration.mean), ns_text(size.duration.stddev));
    out += "</table>\n" + fit_plot(*input.fit);
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
        "change.</p>\n<table>\n<tr><th>statistic</th><th>baseline</th><th>candidate</th><th>difference</th>"
        "<th>bounds</th><th>verdict</th></tr>\n",
        c.candidate_ns.size(), c.baseline_traces.size() > 1 ? "s" : "", traces, c.baseline_ns.size(),
        c.result.baseline.stalled, c.result.candidate.stalled);
    for (const StatComparison& s : c.result.stats)
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{}</td></tr>\n",
          compare_stat_name(s.stat), ns_text(s.baseline_ns), ns_text(s.candidate_ns),
          ns_text(s.difference_ns), ns_text(s.lower_ns), ns_text(s.upper_ns), verdict_name(s.verdict));
    out += "</table>\n";
    if (c.result.stats.empty())
      out += fmt::format("<p class=\"note\">{}</p>\n", html_escape(c.result.gate.reason));
    out += comparison_chart(c.baseline_ns, c.candidate_ns);
  }
  out += "<p class=\"note\">Generated by ett " ETT_VERSION ".</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace ett::host
