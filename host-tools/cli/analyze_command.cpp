// analyze_command.cpp: `ett analyze precision|durations|intervals|histogram|align|pps`: analyses of loaded
// traces.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/input.h"
#include "analysis/output.h"
#include "analysis/pps_align.h"
#include "commands.h"
#include "common/resources.h"
#include "export/output_file.h"
#include "utc_columns.h"

namespace ett::cli {

namespace {

using namespace ett::host;

struct AnalyzeOptions {
  std::string db = default_db_url();
  std::optional<int64_t> trace;
  std::string format = "text";
  std::string output;
  bool force = false;
  std::string time = "ns";  // durations, intervals, histogram, align: ns, or utc through the PPS mapping
  // precision
  int bins = 40;
  bool no_store = false;
  // durations
  std::string from, to, size_of_code, fit;
  std::string pair = "same-code";
  std::optional<double> pi_ns;
  // intervals
  std::optional<double> tau_ns;
  // histogram
  std::string by = "code";
  std::string match;
  uint64_t max_buckets = 100'000;
  // align
  std::vector<int64_t> traces;
  int sync = 0;
  bool pps_align = false;
  // pps
  std::string line = "D7";
  bool falling = false;
  std::string utc_at_edge;
};

// To -o FILE (never over an existing file without --force) or standard output, written as it is formatted (a
// row per action of 10 M events is never held whole); text output starts with the trace's name.
int print(const AnalyzeOptions& o, OutputFormat format, const std::string& name, const Report& parts) {
  auto out = TextOut::open(o.output, o.force);
  if (!out) return report(out.error());
  if (format == OutputFormat::Text && !name.empty()) out->append(name + "\n");
  for (const ReportPart& part : parts) {
    out->append(part.text);
    if (part.late_text) out->append(part.late_text());
    write_independent_lines(part.rows, part.format_rows, *out);
  }
  auto written = out->finish();
  return written ? 0 : report(written.error());
}

// The same for a report that is one text.
int print(const AnalyzeOptions& o, OutputFormat format, const std::string& name, std::string text) {
  return print(o, format, name, Report{{std::move(text)}});
}

int run_precision(const AnalyzeOptions& o, OutputFormat format) {
  auto head = open_trace_head(o.db, o.trace);
  if (!head) return report(head.error());
  PrecisionOptions options;
  options.bins = o.bins;
  auto result = stored_precision(*head->db, head->capture, options);
  if (!result) return report(result.error());
  const bool store = !o.no_store && result->source == PrecisionSource::Calibrate;
  if (store) {
    auto stored = store_precision(*head->db, head->capture.info.trace_id, *result);
    if (!stored) return report(stored.error());
  }
  std::string text = format_precision(*result, format);
  // Text says where the bound went: the durations and intervals of other traces look it up by CPU.
  if (format == OutputFormat::Text && result->source == PrecisionSource::Calibrate)
    text += store ? fmt::format(
                        "\nstored: `ett analyze durations`, `ett analyze intervals` and `ett report` "
                        "quote it for every trace of this CPU ({}) in this database\n",
                        head->capture.info.cpu_brand.empty() ? "no CPU brand recorded"
                                                             : head->capture.info.cpu_brand)
                  : "\nnot stored (--no-store)\n";
  return print(o, format, head->capture.info.name, text);
}

int run_durations(const AnalyzeOptions& o, OutputFormat format) {
  auto from = parse_endpoint(o.from);
  if (!from) return report(from.error());
  auto to = parse_endpoint(o.to);
  if (!to) return report(to.error());
  auto rule = parse_pair_rule(o.pair);
  if (!rule) return report(rule.error());
  std::optional<std::map<uint8_t, double>> sizes;
  FitMethod method = FitMethod::Linear;
  if (!o.fit.empty()) {
    auto parsed = parse_fit_method(o.fit);
    if (!parsed) return report(parsed.error());
    method = *parsed;
    if (o.size_of_code.empty())
      return report({ErrorKind::Usage, "--fit " + o.fit + " needs --size-of-code CODE=SIZE,..."});
  }
  if (!o.size_of_code.empty()) {
    auto parsed = parse_size_of_code(o.size_of_code);
    if (!parsed) return report(parsed.error());
    sizes = *parsed;
  }
  auto utc = parse_time_option(o.time);
  if (!utc) return report(utc.error());
  auto db = open_database(o.db);
  if (!db) return report(db.error());
  auto id = resolve_trace(**db, o.trace);
  if (!id) return report(id.error());
  auto info = load_capture_info(**db, *id);
  if (!info) return report(info.error());
  std::optional<UtcClock> clock;
  if (*utc) {
    auto found = utc_clock(**db, *info);
    if (!found) return report(found.error());
    clock = *found;
  }
  // Paired as the events are read: the events are never all in memory.
  auto result = trace_actions(**db, *info, *from, *to, *rule, o.pi_ns);
  if (!result) return report(result.error());
  // A least-squares fit is computed while the actions' rows are written.
  std::optional<PendingFit> fit;
  if (sizes) {
    auto fitted = start_fit_durations(result->actions, *sizes, method);
    if (!fitted) return report(fitted.error());
    fit.emplace(std::move(*fitted));
  }
  const std::optional<UtcLabels> labels = clock ? std::optional(clock->labels()) : std::nullopt;
  return print(o, format, info->name,
               durations_report(*result, fit ? &*fit : nullptr, format, labels ? &*labels : nullptr));
}

// `--time utc`: the trace's stored PPS mapping, or the refusal naming `ett analyze pps`.
Expected<std::optional<UtcClock>> time_clock(const std::string& time, Database& db, const CaptureInfo& info) {
  ETT_TRY_ASSIGN(const bool utc, parse_time_option(time));
  if (!utc) return std::optional<UtcClock>();
  ETT_TRY_ASSIGN(UtcClock clock, utc_clock(db, info));
  return std::optional<UtcClock>(std::move(clock));
}

int run_intervals(const AnalyzeOptions& o, OutputFormat format) {
  auto utc = parse_time_option(o.time);
  if (!utc) return report(utc.error());
  auto head = open_trace_head(o.db, o.trace);
  if (!head) return report(head.error());
  const Capture& capture = head->capture;
  if (auto any = require_events(*head->db, capture.info); !any) return report(any.error());
  auto clock = time_clock(o.time, *head->db, capture.info);
  if (!clock) return report(clock.error());
  double tau = 0;
  int64_t tau_trace = 0;
  if (o.tau_ns) {
    tau = *o.tau_ns;
  } else {
    auto stored = find_precision(*head->db, capture.info.trace_id);
    if (!stored) return report(stored.error());
    if (*stored) {
      tau = (*stored)->tau_ns;
      tau_trace = (*stored)->trace_id;
    }
  }
  auto gathered = stored_intervals(*head->db, capture, tau);
  if (!gathered) return report(gathered.error());
  IntervalsResult& result = *gathered;
  result.tau_trace_id = tau_trace;
  std::string text = format_intervals(result, format);
  if (*clock) text = intervals_with_utc(text, result, **clock, format);
  return print(o, format, capture.info.name, text);
}

// "2.28 us": a bucket width for the message below, in the unit that keeps it readable.
std::string duration_text(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

// Time buckets run from the first matching event to the last, empty ones included: a narrow bucket on a long
// capture would be hundreds of millions of rows. Refused before any row is made, with the way out: whether
// --by's buckets from the first event to the last (first_ns, last_ns) stay within the cap.
host::Status check_bucket_span(double first_ns, double last_ns, const HistogramSpec& spec,
                               const std::string& by, uint64_t cap) {
  const double buckets = std::floor(last_ns / spec.bucket_ns) - std::floor(first_ns / spec.bucket_ns) + 1;
  // A raised cap still has to fit in memory: each bucket is a row and a line of text, ~200 bytes.
  constexpr double kBytesPerBucket = sizeof(HistogramRow) + 160.0;
  if (buckets <= static_cast<double>(cap))
    return host::check_memory(static_cast<uint64_t>(std::min(buckets * kBytesPerBucket, 1.8e19)),
                              fmt::format("--by {} with {:.0f} buckets", by, buckets));
  return make_error(
      ErrorKind::Usage,
      fmt::format("--by {} makes {:.0f} buckets over the {} from the first event to the last, more "
                  "than the cap of {}: use a bucket of at least {} or raise the cap with "
                  "--max-buckets N",
                  by, buckets, duration_text(last_ns - first_ns), cap,
                  duration_text((last_ns - first_ns) / static_cast<double>(cap))));
}

// The same over the events the filter passes.
host::Status check_bucket_count(std::span<const AnalysisEvent> events, const HistogramSpec& spec,
                                const std::optional<TritPattern>& filter, const std::string& by,
                                uint64_t cap) {
  double first = 0, last = 0;
  bool any = false;
  for (const AnalysisEvent& event : events) {
    if (filter && !filter->matches(event.lines)) continue;
    if (!any) first = event.time_ns;
    last = event.time_ns;
    any = true;
  }
  if (!any) return {};
  return check_bucket_span(first, last, spec, by, cap);
}

int run_histogram(const AnalyzeOptions& o, OutputFormat format) {
  auto spec = parse_histogram_by(o.by);
  if (!spec) return report(spec.error());
  std::optional<TritPattern> filter;
  if (!o.match.empty()) {
    auto pattern = parse_trits(o.match);
    if (!pattern) return report(pattern.error());
    filter = *pattern;
  }
  auto utc = parse_time_option(o.time);
  if (!utc) return report(utc.error());
  if (*utc && spec->key != HistogramKey::Time)
    return report({ErrorKind::Usage, "--time utc applies to --by time:BUCKET (the buckets' start times)"});
  if (spec->key != HistogramKey::Time) {
    // Counters by code or probe: the load's counts, or with a filter counted as the trace is read (no event
    // held).
    auto head = open_trace_head(o.db, o.trace);
    if (!head) return report(head.error());
    auto counted = stored_histogram(*head->db, head->capture.info, *spec, filter);
    if (!counted) return report(counted.error());
    return print(o, format, head->capture.info.name, format_histogram(*counted, format));
  }
  // Time buckets: the span from the first event to the last is checked against the cap before any bucket
  // is counted. Within it, the buckets are counted as the trace is read (no event held). Past it, the trace
  // is refused, unless a filter leaves events whose own span may fit: then they are loaded to tell.
  {
    auto head = open_trace_head(o.db, o.trace);
    if (!head) return report(head.error());
    const CaptureInfo& info = head->capture.info;
    auto span = first_and_last_event_ns(*head->db, info);
    if (!span) return report(span.error());
    if (!*span) return report(no_events(info).error());
    const host::Status fits =
        check_bucket_span((*span)->first_ns, (*span)->last_ns, *spec, o.by, o.max_buckets);
    if (!fits && !filter) return report(fits.error());
    if (fits) {
      std::optional<UtcClock> clock;
      if (*utc) {
        auto found = utc_clock(*head->db, info);
        if (!found) return report(found.error());
        clock = *found;
      }
      auto counted = stored_histogram(*head->db, info, *spec, filter);
      if (!counted) return report(counted.error());
      std::string text = format_histogram(*counted, format);
      if (clock) text = histogram_with_utc(text, *counted, *clock, format);
      return print(o, format, info.name, text);
    }
  }
  auto loaded = open_trace(o.db, o.trace);
  if (!loaded) return report(loaded.error());
  std::optional<UtcClock> clock;
  if (*utc) {
    auto found = utc_clock(*loaded->db, loaded->capture.info);
    if (!found) return report(found.error());
    clock = *found;
  }
  auto fits = check_bucket_count(loaded->capture.events, *spec, filter, o.by, o.max_buckets);
  if (!fits) return report(fits.error());
  const HistogramResult counted = histogram(loaded->capture.events, *spec, filter);
  std::string text = format_histogram(counted, format);
  if (clock) text = histogram_with_utc(text, counted, *clock, format);
  return print(o, format, loaded->capture.info.name, text);
}

// align --pps: through each trace's stored UTC mapping instead of a sync line.
int run_pps_align(const AnalyzeOptions& o, OutputFormat format) {
  auto db = open_database(o.db);
  if (!db) return report(db.error());
  std::vector<Capture> captures;
  std::vector<PpsResult> mappings;
  for (int64_t id : o.traces) {
    auto resolved = resolve_trace(**db, id);
    if (!resolved) return report(resolved.error());
    auto capture = load_capture(**db, id);
    if (!capture) return report(capture.error());
    auto mapping = find_pps(**db, id);
    if (!mapping) return report(mapping.error());
    if (!*mapping)
      return report({ErrorKind::Usage,
                     fmt::format("{} has no UTC mapping: run `ett analyze pps --trace {}` first (it needs a "
                                 "PPS line in the capture)",
                                 capture->info.name, id)});
    captures.push_back(std::move(*capture));
    mappings.push_back(std::move(**mapping));
  }
  auto result = align_by_pps(captures, mappings);
  if (!result) return report(result.error());
  return print(o, format, "", pps_align_report(*result, captures, mappings, o.traces, format));
}

int run_align(const AnalyzeOptions& o, OutputFormat format) {
  if (o.traces.size() < 2)
    return report({ErrorKind::Usage,
                   "align needs two or more traces: --traces REF,T2,... (the first is the reference)"});
  if (o.pps_align && o.sync != 0)
    return report({ErrorKind::Usage, "align: give --sync P or --pps, not both"});
  auto utc = parse_time_option(o.time);
  if (!utc) return report(utc.error());
  if (o.pps_align) return run_pps_align(o, format);
  if (o.sync == 0)
    return report(
        {ErrorKind::Usage, "align needs --sync P (a shared sync line) or --pps (stored UTC mappings)"});
  auto db = open_database(o.db);
  if (!db) return report(db.error());
  std::vector<Capture> captures;
  for (int64_t id : o.traces) {
    auto resolved = resolve_trace(**db, id);
    if (!resolved) return report(resolved.error());
    auto capture = load_capture(**db, id);
    if (!capture) return report(capture.error());
    if (capture->events.empty())
      return report({ErrorKind::Usage, capture->info.name + " has no events: nothing to align"});
    auto sync = check_endpoint(capture->info, {static_cast<uint8_t>(o.sync), {}}, "--sync");
    if (!sync) return report(sync.error());
    captures.push_back(std::move(*capture));
  }
  // --time utc: through the reference's mapping (the sync fit carries the others onto its clock).
  auto clock = time_clock(o.time, **db, captures[0].info);
  if (!clock) return report(clock.error());
  auto result = align_captures(captures, static_cast<uint8_t>(o.sync), format != OutputFormat::Text);
  if (!result) return report(result.error());
  // --time utc: each merged event's time on the reference clock through the reference's mapping.
  std::optional<MergedUtc> merged_utc;
  if (*clock) {
    const CaptureInfo& reference = captures[0].info;
    merged_utc = [&clock, start = reference.capture_start_tsc, hz = reference.tsc_hz](
                     size_t, const AnalysisEvent&, double reference_ns) {
      return (*clock)->mapping.utc_of_capture_ns(reference_ns, start, hz);
    };
  }
  Report text = align_report(*result, captures, o.traces, format, merged_utc ? &*merged_utc : nullptr);
  if (*clock && format == OutputFormat::Text)
    text.push_back({fmt::format("time 0 of the reference is {} (its PPS mapping, labelled from {})\n",
                                (*clock)->at(0), (*clock)->mapping.label_source)});
  return print(o, format, "", text);
}

int run_pps(const AnalyzeOptions& o, OutputFormat format) {
  PpsOptions options;
  options.rising = !o.falling;
  if (!o.utc_at_edge.empty()) {
    auto parsed = parse_utc_at_edge(o.utc_at_edge);
    if (!parsed) return report(parsed.error());
    options.utc_at_pulse = *parsed;
  }
  auto loaded = open_trace(o.db, o.trace);
  if (!loaded) return report(loaded.error());
  // The line's names depend on where the trace came from (DCD..RI on a serial port).
  auto line = pps_line(loaded->capture.info, o.line);
  if (!line) return report(line.error());
  options.line = *line;
  options.captured_at_unix = loaded->capture.info.captured_at_unix;
  auto result = analyze_pps(loaded->capture, options);
  if (!result) return report(result.error());
  if (!o.no_store) {
    auto stored = store_pps(*loaded->db, loaded->capture.info.trace_id, *result);
    if (!stored) return report(stored.error());
  }
  return print(o, format, loaded->capture.info.name, format_pps(*result, format));
}

CLI::App* add_common(CLI::App* sub, AnalyzeOptions& o, bool with_trace = true) {
  if (with_trace) add_trace_option(sub, o.trace);
  sub->add_option("--format", o.format, "text, csv or json")
      ->type_name("text|csv|json")
      ->capture_default_str();
  sub->add_option("-o,--output", o.output, "Write to FILE instead of standard output (- is standard output)")
      ->type_name("FILE");
  sub->add_flag("--force", o.force, "Overwrite an existing output file");
  add_db_option(sub, o.db);
  return sub;
}

}  // namespace

Command add_analyze_command(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* sub = app.add_subcommand(
      "analyze", "Analyse a loaded trace: precision, durations, intervals, histogram, align, pps");
  sub->require_subcommand(1);

  CLI::App* pps = add_common(
      sub->add_subcommand(
          "pps",
          "A GPS receiver's pulse-per-second on a data line: the TSC rate against true seconds (Hz, "
          "ppb), the pulses' jitter, and the TSC-to-UTC mapping (stored with the trace)"),
      *o);
  pps->add_option("--line", o->line,
                  "The data line the PPS output is wired to: D0 to D7, DCD|DSR|CTS|RI on a serial port "
                  "(probe=uart), or a one-line probe's number")
      ->type_name("LINE")
      ->capture_default_str();
  pps->add_flag("--falling", o->falling, "The falling edge marks the second (default: the rising edge)");
  pps->add_option(
         "--utc-at-edge", o->utc_at_edge,
         "N=2026-11-23T16:00:05Z: accepted pulse N (from 1) is that UTC second (default: from the capture's "
         "CMOS start time, when unambiguous)")
      ->type_name("N=ISO");
  pps->add_flag("--no-store", o->no_store, "Do not store the mapping in the database");

  CLI::App* precision = add_common(
      sub->add_subcommand("precision",
                          "Loop-step distribution of a mode=calibrate capture: tau, epsilon and pi at "
                          "95.5 %, 99.7 % and 100 % coverage (stored for the machine's other traces)"),
      *o);
  precision->add_option("--bins", o->bins, "Histogram bins")
      ->type_name("N")
      ->capture_default_str()
      ->check(in_range(1, 1000));
  precision->add_flag("--no-store", o->no_store, "Do not store the result in the database");

  CLI::App* durations = add_common(
      sub->add_subcommand("durations",
                          "Durations of actions from start events (--from) to end events (--to), "
                          "with the ±pi bound; --size-of-code with --fit linear fits a + b * size"),
      *o);
  durations->add_option("--from", o->from, "Start events: PROBE or PROBE:CODE")
      ->type_name("P[:C]")
      ->required();
  durations
      ->add_option("--to", o->to,
                   "End events: PROBE or PROBE:CODE (without a code: the same code as the start)")
      ->type_name("P[:C]")
      ->required();
  add_pair_option(durations, o->pair);
  durations
      ->add_option("--size-of-code", o->size_of_code, "The size each start code stands for: \"1=16,2=500\"")
      ->type_name("C=S,...");
  durations
      ->add_option(
          "--fit", o->fit,
          "linear: least-squares duration = a + b * size; robust: the same line with bisquare weights, "
          "which outliers (stalls) cannot pull away")
      ->type_name("linear|robust");
  durations
      ->add_option("--time", o->time,
                   "ns, or utc: each action's start and end also in UTC (ISO-8601, ns) through the "
                   "trace's PPS mapping (`ett analyze pps`)")
      ->type_name("ns|utc")
      ->capture_default_str();
  durations
      ->add_option("--pi-ns", o->pi_ns,
                   "Precision bound to quote, ns (default: the stored one of this machine)")
      ->type_name("NS")
      ->check(non_negative_number());

  CLI::App* intervals = add_common(
      sub->add_subcommand("intervals", "Inter-arrival statistics per probe and the events closer than tau"),
      *o);
  intervals
      ->add_option("--tau-ns", o->tau_ns, "Threshold, ns (default: the stored 100 % tau of this machine)")
      ->type_name("NS")
      ->check(non_negative_number());

  intervals
      ->add_option("--time", o->time,
                   "ns, or utc: each probe's first and last event and the close pairs also in UTC (ISO-8601, "
                   "ns) through the trace's PPS mapping (`ett analyze pps`)")
      ->type_name("ns|utc")
      ->capture_default_str();

  CLI::App* hist =
      add_common(sub->add_subcommand(
                     "histogram", "Event counters by code, probe or time bucket, with a mask/match filter"),
                 *o);
  hist->add_option("--by", o->by, "code, probe or time:BUCKET (e.g. time:1ms)")
      ->type_name("code|probe|time:BUCKET")
      ->capture_default_str();
  hist->add_option("--max-buckets", o->max_buckets,
                   "The most time buckets --by time:BUCKET may make (bounds memory and output)")
      ->type_name("N")
      ->capture_default_str()
      ->check(in_range(uint64_t{1}, uint64_t{1} << 32));
  hist->add_option("--time", o->time,
                   "ns, or utc: with --by time:BUCKET each bucket's start also in UTC (ISO-8601, ns) through "
                   "the trace's PPS mapping (`ett analyze pps`)")
      ->type_name("ns|utc")
      ->capture_default_str();
  hist->add_option("--match", o->match, "Eight trits D7..D0, each 1, 0 or X: only events whose lines match")
      ->type_name("TRITS");

  CLI::App* align = add_common(
      sub->add_subcommand("align",
                          "Fit the clocks of captures sharing a sync line against the first, and merge "
                          "their events (--format csv: the merged timeline)"),
      *o, false);
  align->add_option("--traces", o->traces, "Trace ids, the reference first")
      ->type_name("ID")
      ->delimiter(',')
      ->required();
  align->add_option("--sync", o->sync, "The probe carrying the shared sync line")
      ->type_name("PROBE")
      ->check(in_range(1, 8));
  align
      ->add_option("--time", o->time,
                   "ns, or utc: the merged timeline (csv, json) gets each event's time_utc, through the "
                   "reference's PPS mapping (`ett analyze pps`); with --pps always, through each trace's own")
      ->type_name("ns|utc")
      ->capture_default_str();
  align->add_flag("--pps", o->pps_align,
                  "Align through each trace's stored PPS mapping (`ett analyze pps`) instead of a sync line, "
                  "and report how far the mappings disagree on the same UTC seconds");

  return {sub, [o, precision, durations, intervals, hist, align, pps] {
            auto format = parse_output_format(o->format);
            if (!format) return report(format.error());
            auto exists = require_database(o->db);
            if (!exists) return report(exists.error());
            if (auto free = refuse_existing_output(o->output, o->force); !free) return report(free.error());
            if (precision->parsed()) return run_precision(*o, *format);
            if (durations->parsed()) return run_durations(*o, *format);
            if (intervals->parsed()) return run_intervals(*o, *format);
            if (hist->parsed()) return run_histogram(*o, *format);
            if (align->parsed()) return run_align(*o, *format);
            if (pps->parsed()) return run_pps(*o, *format);
            return 1;
          }};
}

}  // namespace ett::cli
