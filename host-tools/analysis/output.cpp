// output.cpp: text, CSV and JSON renderings of the analyses' results.
#include "analysis/output.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/decimals.h"
#include "common/line_names.h"
#include "common/row_cursor.h"
#include "common/terminal_text.h"

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

using Json = nlohmann::ordered_json;

// A finite value rounded to `decimals` places: the whole number of units of the last place, and the double
// it gives back (0.0 for any zero, never -0.0).
struct RoundedNumber {
  double units;
  double value;
};
RoundedNumber round_decimals(double value, int decimals) {
  double scale = 1;  // 10^decimals, exactly
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const double units = std::round(value * scale);
  const double rounded = units / scale;
  return {units, rounded == 0 ? 0.0 : rounded};
}

// A number in JSON: rounded to `decimals` places (what the text form shows, and no more digits than the TSC
// can back); null when it is not finite.
Json jnum(double value, int decimals = 4) {
  if (!std::isfinite(value)) return nullptr;
  return round_decimals(value, decimals).value;
}

// An object's JSON text without its closing brace, for members written after it.
std::string open_object(const Json& object) {
  std::string text = object.dump();
  text.pop_back();
  return text;
}

// `digits` significant digits (a slope of 1e-7 ns per byte keeps its digits).
Json jsig(double value, int digits) {
  if (!std::isfinite(value)) return nullptr;
  return std::strtod(fmt::format("{:.{}g}", value, digits).c_str(), nullptr);
}

// A value that is only known when `known`: null otherwise (JSON says null, never a made-up 0).
Json jknown(bool known, double value, int decimals = 4) {
  return known ? jnum(value, decimals) : Json(nullptr);
}

Json jid(int64_t trace_id) {
  return trace_id ? Json(trace_id) : Json(nullptr);
}

// The statistics of no values are unknown, and so is the spread of one value.
Json summary_json(const Summary& s) {
  const bool any = s.count > 0;
  return Json{{"count", s.count},
              {"mean_ns", jknown(any, s.mean)},
              {"stddev_ns", jknown(s.count > 1, s.stddev)},
              {"min_ns", jknown(any, s.min)},
              {"p50_ns", jknown(any, s.p50)},
              {"p99_ns", jknown(any, s.p99)},
              {"max_ns", jknown(any, s.max)}};
}

// One JSON document per analysis, compact, on one line.
std::string json_text(const Json& document) {
  return document.dump() + "\n";
}

// The first `limit` of `total` seqs (`seqs` holds them), then how many more there are.
std::string seq_list(const std::vector<uint64_t>& seqs, size_t limit, size_t total) {
  std::string out;
  for (size_t i = 0; i < seqs.size() && i < limit; ++i) out += fmt::format("{}{}", i ? ", " : "", seqs[i]);
  if (total > limit) out += fmt::format(", ... ({} more)", total - limit);
  return out;
}

std::string seq_list(const std::vector<uint64_t>& seqs, size_t limit) {
  return seq_list(seqs, limit, seqs.size());
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

Json fit_json(const FitResult& fit) {
  const LinearFit& f = fit.fit;
  Json sizes = Json::array();
  for (const SizeRow& row : fit.sizes)
    sizes.push_back(Json{{"size", jnum(row.size)},
                         {"count", row.duration.count},
                         {"mean_ns", jknown(row.duration.count > 0, row.duration.mean)},
                         {"stddev_ns", jknown(row.duration.count > 1, row.duration.stddev)}});
  return Json{{"model", "duration = intercept + slope * size"},
              {"method", fit_method_name(f.method)},
              {"intercept_ns", jnum(f.intercept_ns)},
              {"slope_ns", jsig(f.slope_ns, 6)},
              {"intercept_stderr_ns", jnum(f.intercept_stderr_ns)},
              {"slope_stderr_ns", jsig(f.slope_stderr_ns, 6)},
              {"r2", jnum(f.r2, 6)},
              {"points", f.points},
              {"downweighted", f.downweighted},
              {"actions_without_size", fit.actions_without_size},
              {"sizes", std::move(sizes)}};
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
    Json doc{{"source", source},
             {"steps", r.steps},
             {"tsc_hz", r.tsc_hz},
             {"epsilon_ns", jnum(r.epsilon_ns)},
             {"step", summary_json(r.step)}};
    if (intervals) {
      doc["typical_check_ns"] = jnum(r.typical_check_ns);
      doc["longest_check_ns"] = jnum(r.longest_check_ns);
      doc["stall_threshold_ns"] = jnum(r.stall_threshold_ns);
      doc["stalls"] = r.stall_count;
      doc["tau_outside_stalls_ns"] = jnum(r.tau_outside_stalls_ns);
    }
    Json levels = Json::array();
    for (const CoverageLevel& l : r.levels)
      levels.push_back(Json{{"coverage", jnum(l.coverage)},
                            {"tau_ns", jnum(l.tau_ns)},
                            {"epsilon_ns", jnum(l.epsilon_ns)},
                            {"pi_ns", jnum(l.pi_ns)},
                            {"steps_within", l.steps_within},
                            {"min_interarrival_ns", jnum(l.min_interarrival_ns)}});
    doc["levels"] = std::move(levels);
    Json bins = Json::array();
    for (const HistogramBin& bin : r.histogram)
      bins.push_back(Json{
          {"lo_ns", jnum(bin.lo_ns)}, {"hi_ns", jnum(bin.hi_ns)}, {"count", bin.count}, {"tail", bin.tail}});
    doc["histogram"] = std::move(bins);
    return json_text(doc);
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
    out += fmt::format(
        "(not stored: a capture-time estimate describes this capture, not the machine; to store the "
        "machine's, {})\n",
        kStorePrecisionSteps);
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

namespace {

// Appends to a fmt::memory_buffer.
void add(fmt::memory_buffer& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

void add_tenths(fmt::memory_buffer& out, double value) {
  char field[kFixedRoom];
  add(out, {field, write_tenths(field, value)});
}

// The fields of RowCursor rows. A number with one decimal (write_tenths, at most kFixedRoom); a number as
// jnum() gives it and nlohmann-json writes it (its own shortest round-trip form, "0.0" for a whole number; at
// most kJsonNumberMax): rows written by hand are byte for byte what a JSON document of them would dump; a
// text of any length. put_jnum writes most numbers from their count of ten-thousandths
// (write_json_tenthousandths), the rest through nlohmann's grisu2.
constexpr size_t kJsonNumberMax = 64;  // nlohmann's own number buffer size
char* put_jnum(char* at, double value) {
  if (!std::isfinite(value)) return put(at, "null");
  const RoundedNumber number = round_decimals(value, 4);
  if (number.value == 0) return put(at, "0.0");
  if (char* end = write_json_tenthousandths(at, number.units, number.value)) return end;
  return nlohmann::detail::to_chars(at, at + kJsonNumberMax, number.value);
}
char* put_text(RowCursor& rows, char* at, std::string_view text) {
  return put(rows.room(at, text.size()), text);
}

// Right-aligned in `width` columns; `columns` is the text's display width (± takes one column, two bytes).
void add_right(fmt::memory_buffer& out, size_t width, size_t columns, std::string_view text) {
  if (columns < width) out.append(std::string(width - columns, ' '));
  add(out, text);
}

// CSV: one row per action (pairing: in-order or out-of-order), then one per unmatched start or end (the other
// columns empty); the fit (if any) is in --format json. bound_ns: pi, or pi + the stall that touches the
// action (empty: pi unknown); stall: 1 when one does. --time utc adds start_utc and end_utc.
Report durations_csv(const DurationsResult& r, const UtcLabels* utc) {
  Report report;
  ReportPart actions;
  actions.text = fmt::format(
      "start_seq,end_seq,start_code,end_code,start_ns,end_ns,duration_ns,pairing,bound_ns,"
      "stall{}\n",
      utc ? ",start_utc,end_utc" : "");
  actions.rows = r.actions.size();
  actions.format_rows = [&r, utc](size_t begin, size_t end, fmt::memory_buffer& out) {
    RowCursor rows(out, end - begin, 80, 120 + 4 * kFixedRoom);
    for (size_t i = begin; i < end; ++i) {
      const Action& a = r.actions[i];
      char* at = rows.next();
      at = put_int(at, a.start_seq);
      *at++ = ',';
      at = put_int(at, a.end_seq);
      *at++ = ',';
      at = put_int(at, a.start_code);
      *at++ = ',';
      at = put_int(at, a.end_code);
      *at++ = ',';
      at = write_tenths(at, a.start_ns);
      *at++ = ',';
      at = write_tenths(at, a.end_ns);
      *at++ = ',';
      at = write_tenths(at, a.duration_ns);
      at = a.out_of_order ? put(at, ",out-of-order,") : put(at, ",in-order,");
      if (a.bound_ns > 0) at = write_tenths(at, a.bound_ns);
      at = a.stall_ns > 0 ? put(at, ",1") : put(at, ",0");
      if (utc) {
        *at++ = ',';
        at = put_text(rows, at, utc->at(a.start_ns));
        *at++ = ',';
        at = put_text(rows, at, utc->at(a.end_ns));
      }
      *at++ = '\n';
      rows.done(at);
    }
  };
  report.push_back(std::move(actions));
  std::string unmatched;
  const std::string_view no_times = utc ? ",," : "";
  for (uint64_t seq : r.unmatched_starts)
    unmatched += fmt::format("{},,,,,,,unmatched-start,,{}\n", seq, no_times);
  for (uint64_t seq : r.unmatched_ends)
    unmatched += fmt::format(",{},,,,,,unmatched-end,,{}\n", seq, no_times);
  report.push_back({std::move(unmatched)});
  return report;
}

// JSON: one document, written as nlohmann-json would dump it, with the action array streamed: the summary
// members, "actions", then "fit" (when given) and "time" (--time utc).
Report durations_json(const DurationsResult& r, PendingFit* fit, const UtcLabels* utc) {
  const bool pi_known = r.pi_ns > 0;
  // The members before and after "out_of_order", which lists the end seqs of the flagged actions (millions
  // of them in a 10 M-event trace: written straight from the actions rather than through a Json array).
  const Json before{{"from", endpoint_text(r.from)},        {"to", endpoint_text(r.to)},
                    {"pi_ns", jknown(pi_known, r.pi_ns)},   {"pi_from_trace", jid(r.pi_trace_id)},
                    {"durations", summary_json(r.summary)}, {"unmatched_starts", r.unmatched_starts},
                    {"unmatched_ends", r.unmatched_ends}};
  const Json after{{"stalls", r.stall_count},
                   {"stalled_actions", r.stalled},
                   // Without pi there is no bound to hold.
                   {"bound_holds", pi_known ? Json(r.actions.size() - r.stalled) : Json(nullptr)}};
  fmt::memory_buffer members;
  const std::string first = before.dump();
  members.append(first.data(), first.data() + first.size() - 1);  // all but the closing brace
  add(members, ",\"out_of_order\":[");
  const char* comma = "";
  for (const Action& a : r.actions)
    if (a.out_of_order)
      fmt::format_to(std::back_inserter(members), FMT_COMPILE("{}{}"), std::exchange(comma, ","), a.end_seq);
  add(members, "],");
  const std::string last = after.dump();
  members.append(last.data() + 1, last.data() + last.size());  // all but the opening brace
  std::string text(members.data(), members.size());
  text.pop_back();  // the closing brace: the actions and the rest follow
  Report report;
  ReportPart actions;
  actions.text = text + ",\"actions\":[";
  actions.rows = r.actions.size();
  actions.format_rows = [&r, utc](size_t begin, size_t end, fmt::memory_buffer& out) {
    RowCursor rows(out, end - begin, 150, 200 + 3 * kJsonNumberMax);
    for (size_t i = begin; i < end; ++i) {
      const Action& a = r.actions[i];
      char* at = rows.next();
      if (i) *at++ = ',';
      at = put(at, "{\"start_seq\":");
      at = put_int(at, a.start_seq);
      at = put(at, ",\"end_seq\":");
      at = put_int(at, a.end_seq);
      at = put(at, ",\"start_code\":");
      at = put_int(at, a.start_code);
      at = put(at, ",\"end_code\":");
      at = put_int(at, a.end_code);
      at = put(at, ",\"duration_ns\":");
      at = put_jnum(at, a.duration_ns);
      at = put(at, ",\"bound_ns\":");
      at = a.bound_ns > 0 ? put_jnum(at, a.bound_ns) : put(at, "null");
      at = a.stall_ns > 0 ? put(at, ",\"stall\":true,\"stall_ns\":")
                          : put(at, ",\"stall\":false,\"stall_ns\":");
      at = put_jnum(at, a.stall_ns);
      if (utc) {
        at = put(at, ",\"start_utc\":\"");
        at = put_text(rows, at, utc->at(a.start_ns));
        at = put(at, "\",\"end_utc\":\"");
        at = put_text(rows, at, utc->at(a.end_ns));
        *at++ = '"';
      }
      *at++ = '}';
      rows.done(at);
    }
  };
  report.push_back(std::move(actions));
  ReportPart tail{"]"};
  if (fit) tail.late_text = [fit] { return ",\"fit\":" + fit_json(fit->get()).dump(); };
  report.push_back(std::move(tail));
  report.push_back({utc ? ",\"time\":\"utc\"}\n" : "}\n"});
  return report;
}

// The fit after the table of actions: the line, the robust fit when it differs, the per-size table.
std::string fit_text(const FitResult& fit) {
  const LinearFit& f = fit.fit;
  std::string text = "\n" + fit_line_text(f);
  if (fit.robust_differs) {
    const std::string of = fit.robust_check_points < fit.x.size()
                               ? fmt::format(" (of an even sample of {} of the {} actions)",
                                             fit.robust_check_points, fit.x.size())
                               : "";
    text += fmt::format(
        "note: the least-squares line explains little (R^2 {:.3f}) and a robust fit{} differs: {}"
        "      try --fit robust\n",
        f.r2, of, fit_line_text(*fit.robust_differs));
  }
  if (fit.actions_without_size)
    text += fmt::format("({} actions left out: their start code has no size)\n", fit.actions_without_size);
  text += fmt::format("{:>10}  {:>8}  {:>14}  {:>12}\n", "size", "count", "mean (ns)", "stddev (ns)");
  for (const SizeRow& row : fit.sizes)
    text += fmt::format("{:>10}  {:>8}  {:>14.1f}  {:>12.1f}\n", row.size, row.duration.count,
                        row.duration.mean, row.duration.stddev);
  return text;
}

// The summary, the pairing counts, a table of every action and the fit; --time utc adds a table of the
// actions' UTC times.
Report durations_text(const DurationsResult& r, PendingFit* fit, const UtcLabels* utc) {
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
        "  error bound unknown: no precision stored for this CPU and no --pi-ns; {} of {} actions touch one "
        "of the capture's {} stalls\n  to know it: give --pi-ns NS, or {}\n",
        r.stalled, r.actions.size(), r.stall_count, kStorePrecisionSteps);
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
  out += fmt::format(
      "out of order: {} (ends that closed a start while an older one was still open{})\n", r.out_of_order,
      r.out_of_order == 0 ? "" : ": seq " + seq_list(out_of_order_ends(r.actions, 10), 10, r.out_of_order));
  Report report;
  ReportPart actions;
  if (!r.actions.empty()) {
    out += fmt::format("\n{:>10}  {:>10}  {:>16}  {:>14}  {}\n", "start_seq", "end_seq", "duration (ns)",
                       "bound (ns)", "stall");
    actions.rows = r.actions.size();
    // Each field formatted alone and right-aligned by hand (the one non-ASCII character, ±, takes one
    // column): fmt's width handling measured every field's display width, and a row per action is millions
    // of rows at 10 M events.
    actions.format_rows = [&r](size_t begin, size_t end, fmt::memory_buffer& out) {
      char field[kFixedRoom];
      auto integer = [&](size_t width, uint64_t value) {
        const char* last = fmt::format_to(field, FMT_COMPILE("{}"), value);
        add_right(out, width, static_cast<size_t>(last - field), {field, last});
      };
      // `sign` ("±" or empty) goes before the number, in one column.
      auto decimal = [&](size_t width, double value, std::string_view sign) {
        const char* last = write_tenths(field, value);
        const size_t length = static_cast<size_t>(last - field);
        add_right(out, width, length + (sign.empty() ? 0 : 1), sign);
        add(out, {field, length});
      };
      for (size_t i = begin; i < end; ++i) {
        const Action& a = r.actions[i];
        integer(10, a.start_seq);
        add(out, "  ");
        integer(10, a.end_seq);
        add(out, "  ");
        decimal(16, a.duration_ns, {});
        add(out, "  ");
        if (a.bound_ns > 0)
          decimal(14, a.bound_ns, "±");
        else
          add_right(out, 14, 7, "unknown");
        if (a.stall_ns > 0) {
          add(out, "  STALL ");
          add_tenths(out, a.stall_ns);
          add(out, " ns");
        }
        add(out, "\n");
      }
    };
  }
  actions.text = std::move(out);
  report.push_back(std::move(actions));
  if (fit) report.push_back({.late_text = [fit] { return fit_text(fit->get()); }});
  ReportPart times;
  if (utc && !r.actions.empty()) {
    times.text = fmt::format("\nUTC (PPS mapping, labelled from {}):\n{:>10}  {:>10}  {:<30}  {}\n",
                             utc->source, "start_seq", "end_seq", "start", "end");
    times.rows = r.actions.size();
    times.format_rows = [&r, utc](size_t begin, size_t end, fmt::memory_buffer& out) {
      for (size_t i = begin; i < end; ++i) {
        const Action& a = r.actions[i];
        fmt::format_to(std::back_inserter(out), "{:>10}  {:>10}  {:<30}  {}\n", a.start_seq, a.end_seq,
                       utc->at(a.start_ns), utc->at(a.end_ns));
      }
    };
  }
  report.push_back(std::move(times));
  return report;
}

}  // namespace

std::string report_text(const Report& report) {
  fmt::memory_buffer out;
  for (const ReportPart& part : report) {
    add(out, part.text);
    if (part.late_text) add(out, part.late_text());
    if (part.rows) part.format_rows(0, part.rows, out);
  }
  return fmt::to_string(out);
}

Report durations_report(const DurationsResult& r, PendingFit* fit, OutputFormat format,
                        const UtcLabels* utc) {
  switch (format) {
    case OutputFormat::Csv:
      return durations_csv(r, utc);
    case OutputFormat::Json:
      return durations_json(r, fit, utc);
    case OutputFormat::Text:
      break;
  }
  return durations_text(r, fit, utc);
}

std::string format_durations(const DurationsResult& r, PendingFit* fit, OutputFormat format,
                             const UtcLabels* utc) {
  return report_text(durations_report(r, fit, format, utc));
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
    // Without tau nothing was checked: closer_than_tau is null, not an empty list.
    const bool tau_known = r.tau_ns > 0;
    Json probes = Json::array();
    for (const ProbeIntervals& p : r.probes) {
      Json close = Json::array();
      for (const CloseEvent& c : p.close)
        close.push_back(Json{{"previous_seq", c.previous_seq},
                             {"seq", c.seq},
                             {"gap_ns", jnum(c.gap_ns)},
                             {"stall", c.stall}});
      probes.push_back(Json{{"probe", p.probe},
                            {"events", p.events},
                            {"interarrival", summary_json(p.gaps)},
                            {"stalled_intervals", p.stalled},
                            {"bound_holds", p.gaps.count - p.stalled},
                            {"closer_than_tau", tau_known ? std::move(close) : Json(nullptr)}});
    }
    return json_text(Json{{"tau_ns", jknown(tau_known, r.tau_ns)},
                          {"tau_from_trace", jid(r.tau_trace_id)},
                          {"stalls", r.stall_count},
                          {"probes", std::move(probes)}});
  }
  std::string out = fmt::format("{:>5}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>5}  {}\n",
                                "probe", "events", "mean (ns)", "stddev (ns)", "min (ns)", "p50 (ns)",
                                "p99 (ns)", "max (ns)", "< tau", "stall");
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
    out += fmt::format(
        "events closer than tau: not checked (no precision stored for this CPU and no --tau-ns)\n  to check "
        "them: give --tau-ns NS, or {}\n",
        kStorePrecisionSteps);
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
    Json rows = Json::array();
    for (const HistogramRow& row : r.rows) {
      if (r.spec.key == HistogramKey::Time)
        rows.push_back(Json{{"start_ns", jnum(row.start_ns)}, {"count", row.count}});
      else if (r.spec.key == HistogramKey::Code)
        rows.push_back(Json{{"probe", row.probe}, {"code", row.code}, {"count", row.count}});
      else
        rows.push_back(Json{{"probe", row.probe}, {"count", row.count}});
    }
    Json doc{{"by", r.spec.key == HistogramKey::Code    ? "code"
                    : r.spec.key == HistogramKey::Probe ? "probe"
                                                        : "time"}};
    if (r.spec.key == HistogramKey::Time) doc["bucket_ns"] = jnum(r.spec.bucket_ns);
    doc["match"] = r.filter ? Json(trits_text(*r.filter)) : Json(nullptr);
    doc["total"] = r.total;
    doc["matched"] = r.matched;
    doc["rows"] = std::move(rows);
    return json_text(doc);
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
    out += fmt::format("{:>14}  {:>10}  {}\n", escape_control_characters(row.label), row.count,
                       std::string(static_cast<size_t>(std::ceil(40.0 * static_cast<double>(row.count) /
                                                                 static_cast<double>(top))),
                                   '#'));
  return out;
}

namespace {

// Whether two doubles are the same number, sign of a zero included (so that either's text is the other's).
bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

}  // namespace

char* write_merged_row(char* at, int64_t trace_id, const AnalysisEvent& event, LinearClock clock,
                       const UtcNs* utc, IsoUtcWriter& iso) {
  at = put_int(at, trace_id);
  *at++ = ',';
  at = put_int(at, event.seq);
  *at++ = ',';
  at = put_int(at, event.probe);
  *at++ = ',';
  at = put_int(at, event.code);
  *at++ = ',';
  at = put_int(at, event.lines);
  *at++ = ',';
  const char* const time = at;
  at = write_tenths(at, event.time_ns);
  const std::string_view time_text(time, static_cast<size_t>(at - time));
  *at++ = ',';
  // The reference capture's clock is the identity: its time written once, copied.
  const double reference_ns = clock.reference_ns(event.time_ns);
  at = same_bits(reference_ns, event.time_ns) ? put(at, time_text) : write_tenths(at, reference_ns);
  if (utc) {
    *at++ = ',';
    at = iso.write(*utc, at);
  }
  *at++ = '\n';
  return at;
}

Report align_report(const AlignResult& r, std::span<const Capture> captures,
                    std::span<const int64_t> trace_ids, OutputFormat format, const MergedUtc* utc) {
  auto trace = [trace_ids](size_t capture) {
    return capture < trace_ids.size() ? trace_ids[capture] : int64_t(capture);
  };
  if (format == OutputFormat::Csv) {
    ReportPart rows{utc ? "trace_id,seq,probe,code,lines,time_ns,ref_time_ns,time_utc\n"
                        : "trace_id,seq,probe,code,lines,time_ns,ref_time_ns\n",
                    r.timeline.size()};
    rows.format_rows = [&r, captures, trace, utc](size_t begin, size_t end, fmt::memory_buffer& out) {
      IsoUtcWriter iso;
      RowCursor rows(out, end - begin, utc ? 96 : 64, kMergedRowMax);
      r.timeline.walk(begin, end, [&](const MergedRef& merged) {
        const AnalysisEvent& event = captures[merged.capture].events[merged.event];
        const LinearClock clock = r.clock(merged.capture);
        if (!utc) {
          rows.done(write_merged_row(rows.next(), trace(merged.capture), event, clock, nullptr, iso));
          return;
        }
        const UtcNs at = (*utc)(merged.capture, event, clock.reference_ns(event.time_ns));
        rows.done(write_merged_row(rows.next(), trace(merged.capture), event, clock, &at, iso));
      });
    };
    return {std::move(rows)};
  }
  if (format == OutputFormat::Json) {
    // Written in parts as nlohmann-json would dump the document: each fit's residuals (an array of one per
    // sync edge) and the merged timeline are rows written by hand, the rest comes from nlohmann.
    Json doc{{"sync_probe", r.sync_probe}, {"reference_trace", trace(0)}};
    if (utc) doc["time"] = "utc";
    std::string text = open_object(doc) + ",\"fits\":[";
    Report report;
    for (size_t fit = 0; fit < r.fits.size(); ++fit) {
      const ClockFit& f = r.fits[fit];
      Json fields{{"trace_id", trace(f.capture)},
                  {"edges", f.edges},
                  {"offset_ns", jnum(f.offset_ns)},
                  {"offset_stderr_ns", jnum(f.offset_stderr_ns)},
                  {"slope", jnum(f.slope, 12)},
                  {"drift_ppm", jnum(f.drift_ppm)},
                  {"rms_residual_ns", jnum(f.rms_residual_ns)},
                  {"max_abs_residual_ns", jnum(f.max_abs_residual_ns)},
                  {"stalled_edges", f.stalled_edges},
                  {"bound_holds", f.edges - f.stalled_edges}};
      if (fit) text += ',';
      text += open_object(fields) + ",\"residuals_ns\":[";
      ReportPart residuals{std::move(text), f.residuals_ns.size()};
      residuals.format_rows = [&f](size_t begin, size_t end, fmt::memory_buffer& out) {
        RowCursor rows(out, end - begin, 12, 1 + kJsonNumberMax);
        for (size_t i = begin; i < end; ++i) {
          char* at = rows.next();
          if (i) *at++ = ',';
          rows.done(put_jnum(at, f.residuals_ns[i]));
        }
      };
      report.push_back(std::move(residuals));
      Json stalled = Json::array();
      for (size_t k = 0; k < f.edge_stalled.size(); ++k)
        if (f.edge_stalled[k]) stalled.push_back(k);
      text = "],\"stalled_edge_indexes\":" + stalled.dump() + "}";
    }
    text += fmt::format("],\"merged_events\":{}", r.timeline.size());
    ReportPart rows{std::move(text) + ",\"timeline\":[", r.timeline.size()};
    rows.format_rows = [&r, captures, trace, utc](size_t begin, size_t end, fmt::memory_buffer& out) {
      IsoUtcWriter iso;
      RowCursor rows(out, end - begin, utc ? 170 : 130, 200 + 6 * 20 + 2 * kJsonNumberMax + kIsoUtcLength);
      size_t i = begin;
      r.timeline.walk(begin, end, [&](const MergedRef& merged) {
        const AnalysisEvent& e = captures[merged.capture].events[merged.event];
        const LinearClock clock = r.clock(merged.capture);
        char* at = rows.next();
        if (i) *at++ = ',';
        at = put(at, "{\"trace_id\":");
        at = put_int(at, trace(merged.capture));
        at = put(at, ",\"seq\":");
        at = put_int(at, e.seq);
        at = put(at, ",\"probe\":");
        at = put_int(at, e.probe);
        at = put(at, ",\"code\":");
        at = put_int(at, e.code);
        at = put(at, ",\"lines\":");
        at = put_int(at, e.lines);
        at = put(at, ",\"time_ns\":");
        const char* const time = at;
        at = put_jnum(at, e.time_ns);
        const std::string_view time_text(time, static_cast<size_t>(at - time));
        at = put(at, ",\"ref_time_ns\":");
        // The reference capture's clock is the identity: its time written once, copied.
        const double reference_ns = clock.reference_ns(e.time_ns);
        at = same_bits(reference_ns, e.time_ns) ? put(at, time_text) : put_jnum(at, reference_ns);
        if (utc) {
          at = put(at, ",\"time_utc\":\"");
          at = iso.write((*utc)(merged.capture, e, reference_ns), at);
          *at++ = '"';
        }
        *at++ = '}';
        rows.done(at);
        ++i;
      });
    };
    report.push_back(std::move(rows));
    report.push_back({"]}\n"});
    return report;
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
  return {{std::move(out)}};
}

std::string format_align(const AlignResult& result, std::span<const Capture> captures,
                         std::span<const int64_t> trace_ids, OutputFormat format, const MergedUtc* utc) {
  return report_text(align_report(result, captures, trace_ids, format, utc));
}

std::string format_pps(const PpsResult& r, OutputFormat format) {
  const bool labelled = r.utc_second.has_value();
  auto utc = [&](uint64_t tsc) { return labelled ? format_iso_utc(r.utc_of_tsc(tsc)) : std::string(); };
  if (format == OutputFormat::Csv) {
    std::string out = "seq,tsc,pulse,residual_ns,utc,rejected\n";
    for (const PpsPulse& p : r.pulses)
      out += fmt::format("{},{},{},{},{},\n", p.seq, p.tsc, p.number, num(p.residual_ns), utc(p.tsc));
    for (const PpsRejection& x : r.rejected) out += fmt::format("{},{},,,,\"{}\"\n", x.seq, x.tsc, x.reason);
    return out;
  }
  if (format == OutputFormat::Json) {
    Json rejected = Json::array();
    for (const PpsRejection& x : r.rejected)
      rejected.push_back(Json{{"seq", x.seq}, {"tsc", x.tsc}, {"reason", x.reason}});
    // The capture's own calibration is unknown when its header has no TSC rate.
    const bool calibrated = r.header_tsc_hz > 0;
    return json_text(Json{
        {"line", line_name(r.probe_source, r.line)},
        {"pulses", r.pulses.size()},
        {"missing", r.missing},
        {"rejected", r.rejected.size()},
        {"rejections", std::move(rejected)},
        {"tsc_hz", jnum(r.tsc_hz, 3)},
        {"uncertainty_hz", jnum(r.tsc_hz_stderr, 3)},
        {"uncertainty_ppb", jnum(r.uncertainty_ppb, 3)},
        {"calibrated_tsc_hz", jknown(calibrated, r.header_tsc_hz, 0)},
        {"calibration_error_ppm", jknown(calibrated, (r.header_tsc_hz - r.tsc_hz) / r.tsc_hz * 1e6, 3)},
        {"jitter_p50_ns", jnum(r.jitter_p50_ns)},
        {"jitter_p99_ns", jnum(r.jitter_p99_ns)},
        {"jitter_max_ns", jnum(r.jitter_max_ns)},
        {"first_pulse_tsc", r.pulses.empty() ? Json(nullptr) : Json(r.pulses.front().tsc)},
        {"utc_second", labelled ? Json(*r.utc_second) : Json(nullptr)},
        {"utc_first_pulse", labelled && !r.pulses.empty() ? Json(utc(r.pulses.front().tsc)) : Json(nullptr)},
        {"labels", labelled ? Json(r.label_source) : Json(nullptr)},
        {"label_note", r.label_note.empty() ? Json(nullptr) : Json(r.label_note)}});
  }
  std::string out =
      fmt::format("PPS on {}: {} pulses accepted, {} missing seconds, {} edges rejected\n",
                  line_label(r.probe_source, r.line), r.pulses.size(), r.missing, r.rejected.size());
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
