// output.cpp: text, CSV and JSON renderings of the analyses' results.
#include "analysis/output.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "analysis/tenths.h"

namespace ett::host {

namespace {

// Numbers in JSON: finite with up to 4 decimals, trailing zeros dropped.
std::string num(double value) {
  if (!std::isfinite(value)) return "null";
  std::string text = fmt::format("{:.4f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string summary_json(const Summary& s) {
  return fmt::format(
      "{{\"count\":{},\"mean_ns\":{},\"stddev_ns\":{},\"min_ns\":{},\"p50_ns\":{},\"p99_ns\":{},"
      "\"max_ns\":{}}}",
      s.count, num(s.mean), num(s.stddev), num(s.min), num(s.p50), num(s.p99), num(s.max));
}

std::string seq_list(const std::vector<uint64_t>& seqs, size_t limit) {
  std::string out;
  for (size_t i = 0; i < seqs.size() && i < limit; ++i) out += fmt::format("{}{}", i ? ", " : "", seqs[i]);
  if (seqs.size() > limit) out += fmt::format(", ... ({} more)", seqs.size() - limit);
  return out;
}

std::string json_seqs(const std::vector<uint64_t>& seqs) {
  std::string out = "[";
  for (size_t i = 0; i < seqs.size(); ++i) out += fmt::format("{}{}", i ? "," : "", seqs[i]);
  return out + "]";
}

// "least-squares fit over 700 actions: duration = (...) ns + (...) ns x size, R^2 = ...", newline included.
std::string fit_line_text(const LinearFit& f) {
  const std::string what =
      f.method == FitMethod::Robust
          ? fmt::format("robust fit (bisquare weights) over {} actions, {} down-weighted", f.points,
                        f.downweighted)
          : fmt::format("least-squares fit over {} actions", f.points);
  return fmt::format("{}: duration = ({:.1f} ± {:.1f}) ns + ({:.6g} ± {:.2g}) ns x size, R^2 = {:.6f}\n",
                     what, f.intercept_ns, f.intercept_stderr_ns, f.slope_ns, f.slope_stderr_ns, f.r2);
}

std::string fit_json(const FitResult& fit) {
  const LinearFit& f = fit.fit;
  std::string out = fmt::format(
      "{{\"model\":\"duration = intercept + slope * size\",\"method\":\"{}\",\"intercept_ns\":{},"
      "\"slope_ns\":{},\"intercept_stderr_ns\":{},\"slope_stderr_ns\":{},\"r2\":{},"
      "\"points\":{},\"downweighted\":{},\"actions_without_size\":{},\"sizes\":[",
      fit_method_name(f.method), num(f.intercept_ns), fmt::format("{:.6g}", f.slope_ns),
      num(f.intercept_stderr_ns), fmt::format("{:.6g}", f.slope_stderr_ns), fmt::format("{:.6f}", f.r2),
      f.points, f.downweighted, fit.actions_without_size);
  for (size_t i = 0; i < fit.sizes.size(); ++i)
    out += fmt::format("{}{{\"size\":{},\"count\":{},\"mean_ns\":{},\"stddev_ns\":{}}}", i ? "," : "",
                       num(fit.sizes[i].size), fit.sizes[i].duration.count, num(fit.sizes[i].duration.mean),
                       num(fit.sizes[i].duration.stddev));
  return out + "]}";
}

}  // namespace

Expected<OutputFormat> parse_output_format(const std::string& text) {
  if (text == "text") return OutputFormat::Text;
  if (text == "csv") return OutputFormat::Csv;
  if (text == "json") return OutputFormat::Json;
  return make_error(ErrorKind::Usage, fmt::format("--format '{}': expected text, csv or json", text));
}

std::string format_precision(const PrecisionResult& r, OutputFormat format) {
  const char* source = precision_source_name(r.source);
  const bool intervals = r.source == PrecisionSource::CheckIntervals;
  if (format == OutputFormat::Csv) {
    std::string out = "coverage,tau_ns,epsilon_ns,pi_ns,steps_within,min_interarrival_ns,source\n";
    for (const CoverageLevel& l : r.levels)
      out += fmt::format("{},{},{},{},{},{},{}\n", num(l.coverage), num(l.tau_ns), num(l.epsilon_ns),
                         num(l.pi_ns), l.steps_within, num(l.min_interarrival_ns), source);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string out =
        fmt::format("{{\"source\":\"{}\",\"steps\":{},\"tsc_hz\":{},\"epsilon_ns\":{},\"step\":{},", source,
                    r.steps, r.tsc_hz, num(r.epsilon_ns), summary_json(r.step));
    if (intervals)
      out += fmt::format(
          "\"typical_check_ns\":{},\"longest_check_ns\":{},\"stall_threshold_ns\":{},\"stalls\":{},"
          "\"tau_outside_stalls_ns\":{},",
          num(r.typical_check_ns), num(r.longest_check_ns), num(r.stall_threshold_ns), r.stall_count,
          num(r.tau_outside_stalls_ns));
    out += "\"levels\":[";
    for (size_t i = 0; i < r.levels.size(); ++i) {
      const CoverageLevel& l = r.levels[i];
      out += fmt::format(
          "{}{{\"coverage\":{},\"tau_ns\":{},\"epsilon_ns\":{},\"pi_ns\":{},\"steps_within\":{},"
          "\"min_interarrival_ns\":{}}}",
          i ? "," : "", num(l.coverage), num(l.tau_ns), num(l.epsilon_ns), num(l.pi_ns), l.steps_within,
          num(l.min_interarrival_ns));
    }
    out += "],\"histogram\":[";
    for (size_t i = 0; i < r.histogram.size(); ++i)
      out += fmt::format("{}{{\"lo_ns\":{},\"hi_ns\":{},\"count\":{},\"tail\":{}}}", i ? "," : "",
                         num(r.histogram[i].lo_ns), num(r.histogram[i].hi_ns), r.histogram[i].count,
                         r.histogram[i].tail ? "true" : "false");
    return out + "]}\n";
  }
  if (intervals) {
    std::string out = fmt::format(
        "source: the check intervals of this capture (a capture-time estimate: every 1024 polls the loop "
        "reads "
        "the TSC)\npolls: {}   TSC {} Hz   epsilon = 1/TSC = {:.3f} ns\n"
        "check interval: typical {:.1f} ns ({:.2f} ns per poll), longest {:.1f} ns; {} stalls (intervals "
        "over "
        "{:.1f} ns)\n\n",
        r.steps, r.tsc_hz, r.epsilon_ns, r.typical_check_ns, r.typical_check_ns / 1024, r.longest_check_ns,
        r.stall_count, r.stall_threshold_ns);
    for (const CoverageLevel& l : r.levels)
      out += fmt::format(
          "tau ({:.0f} %) <= longest interval - 1023 typical polls = {:.1f} ns   pi = tau + eps = "
          "{:.1f} ns\n",
          l.coverage * 100, l.tau_ns, l.pi_ns);
    out += fmt::format(
        "outside the stalls: tau <= stall threshold - 1023 typical polls = {:.1f} ns   pi = {:.1f} "
        "ns (the bound for events no stall touches)\n",
        r.tau_outside_stalls_ns, r.tau_outside_stalls_ns + r.epsilon_ns);
    out +=
        "(not stored: a capture-time estimate describes this capture, not the machine; ett analyze precision "
        "on a mode=calibrate capture stores the machine's)\n";
    return out;
  }
  std::string out = fmt::format(
      "source: every loop step of this mode=calibrate capture\nloop steps: {}   TSC {} Hz   epsilon = 1/TSC "
      "= "
      "{:.3f} ns\n",
      r.steps, r.tsc_hz, r.epsilon_ns);
  out += fmt::format(
      "step time: min {:.1f} ns  p50 {:.1f} ns  mean {:.1f} ns  stddev {:.1f} ns  max {:.1f} ns\n\n",
      r.step.min, r.step.p50, r.step.mean, r.step.stddev, r.step.max);
  out += fmt::format("{:>9}  {:>12}  {:>10}  {:>14}  {:>12}\n", "coverage", "tau (ns)", "eps (ns)",
                     "pi = tau+eps", "steps");
  for (const CoverageLevel& l : r.levels)
    out += fmt::format("{:>8.1f}%  {:>12.1f}  {:>10.3f}  {:>14.1f}  {:>12}\n", l.coverage * 100, l.tau_ns,
                       l.epsilon_ns, l.pi_ns, l.steps_within);
  if (!r.levels.empty())
    out += fmt::format(
        "\nno event is lost on a probe whose events are at least {:.1f} ns apart ({:.1f} % coverage)\n",
        r.levels.back().min_interarrival_ns, r.levels.back().coverage * 100);
  uint64_t top = 1;
  for (const HistogramBin& bin : r.histogram) top = std::max(top, bin.count);
  out += "\nloop-step distribution:\n";
  for (const HistogramBin& bin : r.histogram)
    out += fmt::format("{}{:>12.1f} ns {:>10}  {}\n", bin.tail ? "> " : "  ", bin.lo_ns, bin.count,
                       std::string(static_cast<size_t>(std::ceil(50.0 * static_cast<double>(bin.count) /
                                                                 static_cast<double>(top))),
                                   '#'));
  return out;
}

std::string format_durations(const DurationsResult& r, const FitResult* fit, OutputFormat format) {
  if (format == OutputFormat::Csv) {
    // One row per action (pairing: in-order or out-of-order), then one per unmatched start or end (the other
    // columns empty); the fit (if any) is in --format json.
    // bound_ns: pi, or pi + the stall that touches the action (empty: pi unknown); stall: 1 when one does.
    std::string out =
        "start_seq,end_seq,start_code,end_code,start_ns,end_ns,duration_ns,pairing,bound_ns,stall\n";
    const std::set<uint64_t> reordered(r.out_of_order.begin(), r.out_of_order.end());
    for (const Action& a : r.actions)
      out += fmt::format("{},{},{},{},{:.1f},{:.1f},{:.1f},{},{},{}\n", a.start_seq, a.end_seq, a.start_code,
                         a.end_code, a.start_ns, a.end_ns, a.duration_ns,
                         reordered.count(a.end_seq) ? "out-of-order" : "in-order",
                         a.bound_ns > 0 ? fmt::format("{:.1f}", a.bound_ns) : "", a.stall_ns > 0 ? 1 : 0);
    for (uint64_t seq : r.unmatched_starts) out += fmt::format("{},,,,,,,unmatched-start,,\n", seq);
    for (uint64_t seq : r.unmatched_ends) out += fmt::format(",{},,,,,,unmatched-end,,\n", seq);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string out = fmt::format(
        "{{\"from\":\"{}\",\"to\":\"{}\",\"pi_ns\":{},\"pi_from_trace\":{},\"durations\":{},"
        "\"unmatched_starts\":{},\"unmatched_ends\":{},\"out_of_order\":{}",
        endpoint_text(r.from), endpoint_text(r.to), num(r.pi_ns),
        r.pi_trace_id ? fmt::format("{}", r.pi_trace_id) : "null", summary_json(r.summary),
        json_seqs(r.unmatched_starts), json_seqs(r.unmatched_ends), json_seqs(r.out_of_order));
    out += fmt::format(",\"stalls\":{},\"stalled_actions\":{},\"bound_holds\":{},\"actions\":[",
                       r.stall_count, r.stalled, r.actions.size() - r.stalled);
    for (size_t i = 0; i < r.actions.size(); ++i) {
      const Action& a = r.actions[i];
      out += fmt::format(
          "{}{{\"start_seq\":{},\"end_seq\":{},\"start_code\":{},\"end_code\":{},\"duration_ns\":{},"
          "\"bound_ns\":{},\"stall\":{},\"stall_ns\":{}}}",
          i ? "," : "", a.start_seq, a.end_seq, a.start_code, a.end_code, num(a.duration_ns),
          a.bound_ns > 0 ? num(a.bound_ns) : "null", a.stall_ns > 0 ? "true" : "false", num(a.stall_ns));
    }
    out += "]";
    if (fit) out += ",\"fit\":" + fit_json(*fit);
    return out + "}\n";
  }
  const Summary& s = r.summary;
  std::string out = fmt::format("actions from probe {} to probe {}: {} paired\n", endpoint_text(r.from),
                                endpoint_text(r.to), r.actions.size());
  // The statistics carry ±pi only when the bound holds for every action (no stall touches any).
  const std::string pm = r.pi_ns > 0 && r.stalled == 0 ? fmt::format(" ± {:.1f} ns", r.pi_ns) : "";
  if (s.count) {
    out += fmt::format("  count   {}\n", s.count);
    out += fmt::format("  mean    {:.1f} ns{}\n  stddev  {:.1f} ns\n", s.mean, pm, s.stddev);
    out += fmt::format(
        "  min     {:.1f} ns{}\n  p50     {:.1f} ns{}\n  p99     {:.1f} ns{}\n  max     {:.1f} ns{}\n", s.min,
        pm, s.p50, pm, s.p99, pm, s.max, pm);
  }
  const std::string pi_source =
      r.pi_trace_id ? fmt::format(" of this CPU, measured on trace {}", r.pi_trace_id) : "";
  if (r.pi_ns <= 0)
    out += fmt::format(
        "  error bound unknown: no precision stored for this machine (ett analyze precision) and "
        "no --pi-ns; {} of {} actions touch one of the capture's {} stalls\n",
        r.stalled, r.actions.size(), r.stall_count);
  else if (r.stalled == 0)
    out += fmt::format(
        "  each duration is within ±{:.1f} ns (pi{}) of the real one: the bound holds for {} of {} "
        "actions (the capture's {} stalls touch none)\n",
        r.pi_ns, pi_source, r.actions.size(), r.actions.size(), r.stall_count);
  else
    out += fmt::format(
        "  the ±{:.1f} ns bound (pi{}) holds for {} of {} actions; {} touch one of the capture's {} "
        "stalls (marked STALL: late by up to the stall, their bound is pi + the stall)\n",
        r.pi_ns, pi_source, r.actions.size() - r.stalled, r.actions.size(), r.stalled, r.stall_count);
  out += fmt::format("unmatched starts: {}{}\n", r.unmatched_starts.size(),
                     r.unmatched_starts.empty() ? "" : " (seq " + seq_list(r.unmatched_starts, 10) + ")");
  out += fmt::format("unmatched ends: {}{}\n", r.unmatched_ends.size(),
                     r.unmatched_ends.empty() ? "" : " (seq " + seq_list(r.unmatched_ends, 10) + ")");
  out += fmt::format("out of order: {} (ends that closed a start while an older one was still open{})\n",
                     r.out_of_order.size(),
                     r.out_of_order.empty() ? "" : ": seq " + seq_list(r.out_of_order, 10));
  if (!r.actions.empty()) {
    out += fmt::format("\n{:>10}  {:>10}  {:>16}  {:>14}  {}\n", "start_seq", "end_seq", "duration (ns)",
                       "bound (ns)", "stall");
    // Each field formatted alone into a buffer and right-aligned by hand (the one non-ASCII character, ±,
    // takes one column): fmt's width handling measured every field's display width, and a row per action
    // is millions of rows at 10 M events.
    out.reserve(out.size() + r.actions.size() * 64);
    char field[400];  // any double with one decimal fits (DBL_MAX is 309 digits)
    auto right = [&](size_t width, size_t columns, std::string_view text) {
      if (columns < width) out.append(width - columns, ' ');
      out.append(text);
    };
    auto integer = [&](size_t width, uint64_t value) {
      const char* end = fmt::format_to(field, FMT_COMPILE("{}"), value);
      right(width, static_cast<size_t>(end - field), {field, end});
    };
    // `sign` ("±" or empty) goes before the number, in one column.
    auto decimal = [&](size_t width, double value, std::string_view sign) {
      const char* end = write_tenths(field, value);
      const size_t length = static_cast<size_t>(end - field), columns = length + (sign.empty() ? 0 : 1);
      if (columns < width) out.append(width - columns, ' ');
      out.append(sign);
      out.append(field, length);
    };
    for (const Action& a : r.actions) {
      integer(10, a.start_seq);
      out += "  ";
      integer(10, a.end_seq);
      out += "  ";
      decimal(16, a.duration_ns, {});
      out += "  ";
      if (a.bound_ns > 0)
        decimal(14, a.bound_ns, "±");
      else
        right(14, 7, "unknown");
      if (a.stall_ns > 0) {
        out += "  STALL ";
        out.append(field, write_tenths(field, a.stall_ns));
        out += " ns";
      }
      out += '\n';
    }
  }
  if (fit) {
    const LinearFit& f = fit->fit;
    out += "\n" + fit_line_text(f);
    if (fit->robust_differs) {
      const std::string of = fit->robust_check_points < fit->x.size()
                                 ? fmt::format(" (of an even sample of {} of the {} actions)",
                                               fit->robust_check_points, fit->x.size())
                                 : "";
      out += fmt::format(
          "note: the least-squares line explains little (R^2 {:.3f}) and a robust fit{} differs: {}"
          "      try --fit robust\n",
          f.r2, of, fit_line_text(*fit->robust_differs));
    }
    if (fit->actions_without_size)
      out += fmt::format("({} actions left out: their start code has no size)\n", fit->actions_without_size);
    out += fmt::format("{:>10}  {:>8}  {:>14}  {:>12}\n", "size", "count", "mean (ns)", "stddev (ns)");
    for (const SizeRow& row : fit->sizes)
      out += fmt::format("{:>10}  {:>8}  {:>14.1f}  {:>12.1f}\n", row.size, row.duration.count,
                         row.duration.mean, row.duration.stddev);
  }
  return out;
}

std::string format_intervals(const IntervalsResult& r, OutputFormat format) {
  if (format == OutputFormat::Csv) {
    std::string out =
        "probe,events,count,mean_ns,stddev_ns,min_ns,p50_ns,p99_ns,max_ns,closer_than_tau,stalled\n";
    for (const ProbeIntervals& p : r.probes)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", p.probe, p.events, p.gaps.count,
                         num(p.gaps.mean), num(p.gaps.stddev), num(p.gaps.min), num(p.gaps.p50),
                         num(p.gaps.p99), num(p.gaps.max), p.close.size(), p.stalled);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string out =
        fmt::format("{{\"tau_ns\":{},\"tau_from_trace\":{},\"stalls\":{},\"probes\":[", num(r.tau_ns),
                    r.tau_trace_id ? fmt::format("{}", r.tau_trace_id) : "null", r.stall_count);
    for (size_t i = 0; i < r.probes.size(); ++i) {
      const ProbeIntervals& p = r.probes[i];
      out += fmt::format(
          "{}{{\"probe\":{},\"events\":{},\"interarrival\":{},\"stalled_intervals\":{},"
          "\"bound_holds\":{},\"closer_than_tau\":[",
          i ? "," : "", p.probe, p.events, summary_json(p.gaps), p.stalled, p.gaps.count - p.stalled);
      for (size_t k = 0; k < p.close.size(); ++k)
        out += fmt::format("{}{{\"previous_seq\":{},\"seq\":{},\"gap_ns\":{},\"stall\":{}}}", k ? "," : "",
                           p.close[k].previous_seq, p.close[k].seq, num(p.close[k].gap_ns),
                           p.close[k].stall ? "true" : "false");
      out += "]}";
    }
    return out + "]}\n";
  }
  std::string out =
      fmt::format("{:>5}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>5}  {}\n", "probe",
                  "events", "mean (ns)", "stddev", "min", "p50", "p99", "max", "< tau", "stall");
  uint64_t intervals = 0, stalled = 0;
  for (const ProbeIntervals& p : r.probes) {
    out += fmt::format(
        "{:>5}  {:>8}  {:>12.1f}  {:>12.1f}  {:>12.1f}  {:>12.1f}  {:>12.1f}  {:>12.1f}  {:>5}  {}\n",
        p.probe, p.events, p.gaps.mean, p.gaps.stddev, p.gaps.min, p.gaps.p50, p.gaps.p99, p.gaps.max,
        p.close.size(), p.stalled);
    intervals += p.gaps.count;
    stalled += p.stalled;
  }
  out += fmt::format(
      "the loop-step bound (pi) holds for {} of {} intervals{}\n", intervals - stalled, intervals,
      stalled
          ? fmt::format("; {} touch one of the capture's {} stalls (column stall)", stalled, r.stall_count)
          : fmt::format(" (the capture's {} stalls touch none)", r.stall_count));
  if (r.tau_ns <= 0) {
    out += "events closer than tau: not checked (no precision stored for this machine and no --tau-ns)\n";
    return out;
  }
  size_t close = 0;
  for (const ProbeIntervals& p : r.probes) close += p.close.size();
  out += fmt::format(
      "events closer than tau = {:.1f} ns ({}an event may have been lost between them): {}\n", r.tau_ns,
      r.tau_trace_id ? fmt::format("the 100 % tau of this CPU, measured on trace {}; ", r.tau_trace_id) : "",
      close);
  size_t shown = 0;
  for (const ProbeIntervals& p : r.probes)
    for (const CloseEvent& c : p.close)
      if (shown++ < 20)
        out += fmt::format("  probe {}: seq {} -> {}  {:.1f} ns{}\n", p.probe, c.previous_seq, c.seq,
                           c.gap_ns, c.stall ? "  STALL" : "");
  if (shown > 20) out += fmt::format("  ... ({} more)\n", shown - 20);
  return out;
}

std::string format_histogram(const HistogramResult& r, OutputFormat format) {
  const char* key = r.spec.key == HistogramKey::Code    ? "probe_code"
                    : r.spec.key == HistogramKey::Probe ? "probe"
                                                        : "start_ns";
  if (format == OutputFormat::Csv) {
    std::string out = fmt::format("{},count\n", key);
    for (const HistogramRow& row : r.rows) out += fmt::format("{},{}\n", row.label, row.count);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string out =
        fmt::format("{{\"by\":\"{}\",\"match\":{},\"total\":{},\"matched\":{},\"rows\":[",
                    r.spec.key == HistogramKey::Code    ? "code"
                    : r.spec.key == HistogramKey::Probe ? "probe"
                                                        : "time",
                    r.filter ? "\"" + trits_text(*r.filter) + "\"" : "null", r.total, r.matched);
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const HistogramRow& row = r.rows[i];
      if (r.spec.key == HistogramKey::Time)
        out += fmt::format("{}{{\"start_ns\":{},\"count\":{}}}", i ? "," : "", num(row.start_ns), row.count);
      else if (r.spec.key == HistogramKey::Code)
        out += fmt::format("{}{{\"probe\":{},\"code\":{},\"count\":{}}}", i ? "," : "", row.probe, row.code,
                           row.count);
      else
        out += fmt::format("{}{{\"probe\":{},\"count\":{}}}", i ? "," : "", row.probe, row.count);
    }
    return out + "]}\n";
  }
  std::string out = fmt::format("{} of {} events{}\n", r.matched, r.total,
                                r.filter ? " match " + trits_text(*r.filter) + " (D7..D0)" : "");
  uint64_t top = 1;
  for (const HistogramRow& row : r.rows) top = std::max(top, row.count);
  const char* header = r.spec.key == HistogramKey::Code    ? "probe:code"
                       : r.spec.key == HistogramKey::Probe ? "probe"
                                                           : "from (ns)";
  out += fmt::format("{:>14}  {:>10}\n", header, "count");
  for (const HistogramRow& row : r.rows)
    out += fmt::format("{:>14}  {:>10}  {}\n", row.label, row.count,
                       std::string(static_cast<size_t>(std::ceil(40.0 * static_cast<double>(row.count) /
                                                                 static_cast<double>(top))),
                                   '#'));
  return out;
}

std::string format_align(const AlignResult& r, const std::vector<int64_t>& trace_ids, OutputFormat format) {
  auto trace = [&](size_t capture) {
    return capture < trace_ids.size() ? trace_ids[capture] : int64_t(capture);
  };
  if (format == OutputFormat::Csv) {
    std::string out = "trace_id,seq,probe,code,lines,time_ns,ref_time_ns\n";
    for (const MergedEvent& e : r.timeline)
      out += fmt::format("{},{},{},{},{},{:.1f},{:.1f}\n", trace(e.capture), e.event.seq, e.event.probe,
                         e.event.code, e.event.lines, e.event.time_ns, e.ref_time_ns);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string out =
        fmt::format("{{\"sync_probe\":{},\"reference_trace\":{},\"fits\":[", r.sync_probe, trace(0));
    for (size_t i = 0; i < r.fits.size(); ++i) {
      const ClockFit& f = r.fits[i];
      out += fmt::format(
          "{}{{\"trace_id\":{},\"edges\":{},\"offset_ns\":{},\"offset_stderr_ns\":{},\"slope\":{:.12f},"
          "\"drift_ppm\":{},\"rms_residual_ns\":{},\"max_abs_residual_ns\":{},\"stalled_edges\":{},"
          "\"bound_holds\":{},\"residuals_ns\":[",
          i ? "," : "", trace(f.capture), f.edges, num(f.offset_ns), num(f.offset_stderr_ns), f.slope,
          num(f.drift_ppm), num(f.rms_residual_ns), num(f.max_abs_residual_ns), f.stalled_edges,
          f.edges - f.stalled_edges);
      for (size_t k = 0; k < f.residuals_ns.size(); ++k) out += (k ? "," : "") + num(f.residuals_ns[k]);
      out += "],\"stalled_edge_indexes\":[";
      size_t listed = 0;
      for (size_t k = 0; k < f.edge_stalled.size(); ++k)
        if (f.edge_stalled[k]) out += fmt::format("{}{}", listed++ ? "," : "", k);
      out += "]}";
    }
    out += fmt::format("],\"merged_events\":{},\"timeline\":[", r.timeline.size());
    for (size_t i = 0; i < r.timeline.size(); ++i) {
      const MergedEvent& e = r.timeline[i];
      out += fmt::format(
          "{}{{\"trace_id\":{},\"seq\":{},\"probe\":{},\"code\":{},\"lines\":{},\"time_ns\":{},"
          "\"ref_time_ns\":{}}}",
          i ? "," : "", trace(e.capture), e.event.seq, e.event.probe, e.event.code, e.event.lines,
          num(e.event.time_ns), num(e.ref_time_ns));
    }
    return out + "]}\n";
  }
  std::string out =
      fmt::format("sync probe {}; reference: trace {}; t_ref = offset + slope x t\n", r.sync_probe, trace(0));
  out += fmt::format("{:>8}  {:>6}  {:>16}  {:>12}  {:>14}  {:>14}  {:>7}\n", "trace", "edges", "offset (ns)",
                     "drift (ppm)", "rms resid (ns)", "max resid (ns)", "stalled");
  size_t edges = 0, stalled = 0;
  for (const ClockFit& f : r.fits) {
    out += fmt::format("{:>8}  {:>6}  {:>16.1f}  {:>12.3f}  {:>14.1f}  {:>14.1f}  {:>7}\n", trace(f.capture),
                       f.edges, f.offset_ns, f.drift_ppm, f.rms_residual_ns, f.max_abs_residual_ns,
                       f.stalled_edges);
    if (f.capture == 0) continue;  // the reference's edges are counted in every other fit's
    edges += f.edges;
    stalled += f.stalled_edges;
  }
  out += fmt::format(
      "the loop-step bound (pi) holds for {} of {} paired sync edges{}\n", edges - stalled, edges,
      stalled ? " (column stalled: a stall of that capture or of the reference touches the others)" : "");
  out += fmt::format("merged timeline: {} events (--format csv prints it)\n", r.merged_events);
  return out;
}

std::string format_pps(const PpsResult& r, OutputFormat format) {
  const bool labelled = r.utc_second.has_value();
  auto utc = [&](uint64_t tsc) { return labelled ? format_utc(r.utc_of_tsc(tsc)) : std::string(); };
  if (format == OutputFormat::Csv) {
    std::string out = "seq,tsc,pulse,residual_ns,utc,rejected\n";
    for (const PpsPulse& p : r.pulses)
      out += fmt::format("{},{},{},{},{},\n", p.seq, p.tsc, p.number, num(p.residual_ns), utc(p.tsc));
    for (const PpsRejection& x : r.rejected) out += fmt::format("{},{},,,,\"{}\"\n", x.seq, x.tsc, x.reason);
    return out;
  }
  if (format == OutputFormat::Json) {
    std::string rejected = "[";
    for (size_t i = 0; i < r.rejected.size(); ++i)
      rejected += fmt::format("{}{{\"seq\":{},\"tsc\":{},\"reason\":\"{}\"}}", i ? "," : "",
                              r.rejected[i].seq, r.rejected[i].tsc, r.rejected[i].reason);
    rejected += "]";
    const double offset_ppm = (r.header_tsc_hz - r.tsc_hz) / r.tsc_hz * 1e6;
    return fmt::format(
        "{{\"line\":\"D{}\",\"pulses\":{},\"missing\":{},\"rejected\":{},\"rejections\":{},\"tsc_hz\":{:.3f},"
        "\"uncertainty_hz\":{:.3f},\"uncertainty_ppb\":{:.3f},\"calibrated_tsc_hz\":{:.0f},"
        "\"calibration_error_ppm\":{:.3f},\"jitter_p50_ns\":{},\"jitter_p99_ns\":{},\"jitter_max_ns\":{},"
        "\"first_pulse_tsc\":{},\"utc_second\":{},\"utc_first_pulse\":{},\"labels\":{},\"label_note\":{}}}\n",
        r.line, r.pulses.size(), r.missing, r.rejected.size(), rejected, r.tsc_hz, r.tsc_hz_stderr,
        r.uncertainty_ppb, r.header_tsc_hz, offset_ppm, num(r.jitter_p50_ns), num(r.jitter_p99_ns),
        num(r.jitter_max_ns), r.pulses.front().tsc, labelled ? std::to_string(*r.utc_second) : "null",
        labelled ? "\"" + utc(r.pulses.front().tsc) + "\"" : "null",
        labelled ? "\"" + r.label_source + "\"" : "null",
        r.label_note.empty() ? "null" : "\"" + r.label_note + "\"");
  }
  std::string out = fmt::format("PPS on D{}: {} pulses accepted, {} missing seconds, {} edges rejected\n",
                                r.line, r.pulses.size(), r.missing, r.rejected.size());
  for (const PpsRejection& x : r.rejected) out += fmt::format("  rejected seq {}: {}\n", x.seq, x.reason);
  out += fmt::format("TSC rate: {:.3f} Hz ± {:.3f} Hz ({:.3f} ppb) against the pulses\n", r.tsc_hz,
                     r.tsc_hz_stderr, r.uncertainty_ppb);
  out += fmt::format("the capture's own calibration: {:.0f} Hz ({:+.3f} ppm from the pulses)\n",
                     r.header_tsc_hz, (r.header_tsc_hz - r.tsc_hz) / r.tsc_hz * 1e6);
  out += fmt::format("jitter (|residual| of the pulses): p50 {:.1f} ns, p99 {:.1f} ns, max {:.1f} ns\n",
                     r.jitter_p50_ns, r.jitter_p99_ns, r.jitter_max_ns);
  if (labelled)
    out += fmt::format("UTC: pulse 1 (seq {}) is {} (labelled from {})\n", r.pulses.front().seq,
                       utc(r.pulses.front().tsc),
                       r.label_source == "cmos" ? "the capture's CMOS start time" : "--utc-at-edge");
  else
    out += "UTC: not labelled: " + r.label_note + "\n";
  return out;
}

}  // namespace ett::host
