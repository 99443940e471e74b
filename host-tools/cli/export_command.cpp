// export_command.cpp: `ett export --format F [-o FILE]`: a loaded trace for other tools (export/exporters.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/input.h"
#include "commands.h"
#include "export/exporters.h"
#include "export/output_file.h"
#include "export/vcd.h"
#include "progress.h"

namespace ett::cli {

namespace {

using namespace ett::host;

struct ExportOptions {
  std::string db = default_db_url();
  std::optional<int64_t> trace;
  std::string format;
  std::string output;
  bool force = false;
  std::string pair = "same-code";
  std::string from, to;   // perfetto: actions
  std::string timescale;  // vcd
  bool no_bus = false;    // vcd
  std::string time = "relative";
};

// The probes' `ett label` names, [probe - 1] ("" for an unlabelled probe).
Expected<std::vector<std::string>> probe_labels(Database& db, int64_t trace) {
  const SqlValue params[] = {trace};
  ETT_TRY_ASSIGN(auto rows,
                 db.query("SELECT probe, label FROM probes WHERE trace_id = $1 ORDER BY probe", params));
  std::vector<std::string> labels;
  for (const auto& row : rows.rows) {
    const int probe = row[0] ? std::atoi(row[0]->c_str()) : 0;
    if (probe < 1 || probe > 255) continue;
    if (labels.size() < static_cast<size_t>(probe)) labels.resize(static_cast<size_t>(probe));
    labels[probe - 1] = row[1].value_or("");
  }
  return labels;
}

uint64_t selected(std::span<const CodeCount> counts, const Endpoint& endpoint) {
  uint64_t events = 0;
  for (const CodeCount& count : counts)
    if (count.probe == endpoint.probe && (!endpoint.code || count.code == *endpoint.code))
      events += count.events;
  return events;
}

// Every format takes each event once in order (Exporter::stream) and is written as the trace is read: its
// events are never all in memory. The actions (--from/--to) are paired as the events pass and handed over
// with the events that close them (Exporter::actions_as_they_close), or kept as their ends and handed over
// after the events.
host::Status stream_export(const ExportOptions& o, const Exporter& exporter, const TscUtcClock* utc,
                           const std::optional<Endpoint>& from, const std::optional<Endpoint>& to,
                           PairRule rule, int64_t timescale_ps, TextOut& out, Progress& bar) {
  bar.phase("reading the trace");
  ETT_TRY_ASSIGN(LoadedTrace head, open_trace_head(o.db, o.trace));
  const CaptureInfo& info = head.capture.info;
  if (from) ETT_TRY(check_endpoints(info, *from, *to));
  ETT_TRY_ASSIGN(const std::vector<std::string> labels, probe_labels(*head.db, info.trace_id));
  ETT_TRY_ASSIGN(const std::vector<CodeCount> counts, code_counts(*head.db, info.trace_id));
  ExportInput input{head.capture, labels, utc, timescale_ps, !o.no_bus};
  input.probes = info.probe_count;
  for (const CodeCount& count : counts) input.probes = std::max(input.probes, count.probe);
  // The earliest event's time, where the format writes relative times from it: found before the read, and
  // checked as the events pass (an event more than 1 ns earlier: event_blocks does not match the events).
  const bool earliest_needed = exporter.stream_needs_earliest == Exporter::Earliest::Always ||
                               (exporter.stream_needs_earliest == Exporter::Earliest::WithoutUtc && !utc);
  if (earliest_needed) {
    ETT_TRY_ASSIGN(input.earliest_ns, earliest_event_ns(*head.db, info));
  }
  std::optional<ActionPairer> pairer;
  auto start_pairing = [&]() -> host::Status {
    if (!from) return {};
    ETT_TRY_ASSIGN(ActionPairer made, ActionPairer::make(*from, *to, rule, ActionPairer::Keep::Ends));
    // Room for as many actions as the endpoints' events allow (address space: pages are touched as actions
    // come), so that 5 M of them are not copied at every doubling; none for a format that takes each action
    // as it closes. A count that cannot be reserved (a database whose event_codes lie) leaves the vectors to
    // grow.
    const uint64_t starts = selected(counts, *from), ends = selected(counts, *to);
    try {
      made.reserve(starts, exporter.actions_as_they_close ? 0 : std::min(starts, ends));
    } catch (const std::exception&) {
    }
    pairer.emplace(std::move(made));
    return {};
  };
  ETT_TRY(start_pairing());
  bar.phase(fmt::format("reading trace {} and writing it as {}", info.trace_id, exporter.name));
  std::unique_ptr<StreamedExport> writer;  // made with the first events: a trace without any writes nothing
  std::vector<ActionEnds> closed;          // the actions the events of a batch close, as they close
  auto take = [&](std::span<const AnalysisEvent> events) -> host::Status {
    if (earliest_needed)
      for (const AnalysisEvent& event : events)
        if (event.time_ns < input.earliest_ns - 1)
          return make_error(
              ErrorKind::Usage,
              fmt::format("trace {}: event seq {} at {:.1f} ns is earlier than the earliest time "
                          "that event_blocks gives ({:.1f} ns): the two tables do not match "
                          "(changed by hand?)",
                          info.trace_id, event.seq, event.time_ns, input.earliest_ns));
    if (!writer) writer = exporter.stream(input, out);
    if (pairer) {
      pairer->add(events);
      if (exporter.actions_as_they_close) pairer->take_ends(closed);
    }
    writer->add(events, closed);
    return {};
  };
  // Into a file, the export can start again should the database hand rows back (PostgreSQL then reads the
  // trace in its plain scan's order, not through the index).
  auto again = [&]() -> host::Status {
    writer.reset();
    ETT_TRY(start_pairing());
    return out.rewind();
  };
  ETT_TRY(stream_trace_events(*head.db, head.capture, take,
                              out.can_rewind() ? StreamRestart(again) : StreamRestart()));
  std::vector<ActionEnds> actions;
  if (pairer) {
    ETT_TRY_ASSIGN(actions, std::move(*pairer).finish_ends());
  }
  writer->finish(ActionList(actions));
  return {};
}

int run_export(const ExportOptions& o) {
  const Exporter* exporter = find_exporter(o.format);
  if (!exporter)
    return report({ErrorKind::Usage, "--format '" + o.format + "': expected " + exporter_names()});
  if (o.from.empty() != o.to.empty()) return report({ErrorKind::Usage, "--from and --to go together"});
  if (!o.from.empty() && !exporter->takes_actions)
    return report(
        {ErrorKind::Usage, fmt::format("--from/--to (actions) do not apply to --format {}", exporter->name)});
  const bool vcd = std::string_view(exporter->name) == "vcd";
  if ((!o.timescale.empty() || o.no_bus) && !vcd)
    return report({ErrorKind::Usage,
                   fmt::format("--timescale and --no-bus apply to --format vcd, not {}", exporter->name)});
  int64_t timescale_ps = 1000;
  if (!o.timescale.empty()) {
    auto parsed = parse_vcd_timescale(o.timescale);
    if (!parsed) return report(parsed.error());
    timescale_ps = *parsed;
  }
  if (o.time != "relative" && o.time != "utc")
    return report({ErrorKind::Usage, "--time '" + o.time + "': expected relative or utc"});
  // Binary data on a terminal garbles it: only when standard output was asked for by name (-o -).
  if (std::string_view(exporter->name) == "perfetto-proto" && o.output.empty() && ::isatty(STDOUT_FILENO))
    return report({ErrorKind::Usage,
                   "--format perfetto-proto is binary and standard output is a terminal: give -o FILE (or "
                   "-o - to send it there anyway)"});
  auto rule = parse_pair_rule(o.pair);
  if (!rule) return report(rule.error());
  std::optional<Endpoint> from, to;
  if (!o.from.empty()) {
    auto f = parse_endpoint(o.from);
    if (!f) return report(f.error());
    auto t = parse_endpoint(o.to);
    if (!t) return report(t.error());
    from = *f;
    to = *t;
  }
  auto exists = require_database(o.db);
  if (!exists) return report(exists.error());
  std::optional<TscUtcClock> utc;
  if (o.time == "utc") {
    // Checked before the events are read: a 10 M-event trace takes seconds to load.
    auto db = open_database(o.db);
    if (!db) return report(db.error());
    auto trace = resolve_trace(**db, o.trace);
    if (!trace) return report(trace.error());
    auto mapping = find_pps(**db, *trace);
    if (!mapping) return report(mapping.error());
    if (!*mapping)
      return report(
          {ErrorKind::Usage,
           fmt::format("--time utc: trace {} has no PPS mapping; run `ett analyze pps --line Dn` first",
                       *trace)});
    if (!(*mapping)->utc_second)
      return report(
          {ErrorKind::Usage,
           fmt::format("--time utc: the PPS mapping of trace {} has no UTC label; run `ett analyze pps` "
                       "with --utc-at-edge N=ISO",
                       *trace)});
    utc.emplace((*mapping)->anchor_tsc, (*mapping)->tsc_hz, *(*mapping)->utc_second);
  }
  // The output first: "already exists" before seconds of reading. A file is written under a temporary name
  // and put in place by finish(): an export that does not complete (an error, or Ctrl-C, which ends the run
  // at once) leaves no file and an earlier one as it was.
  const bool to_file = !o.output.empty() && o.output != "-";
  auto out = TextOut::open(o.output, o.force);
  if (!out) return report(out.error());
  Progress bar("export");
  if (!to_file) bar.data_to_stdout();
  if (to_file) bar.watch_file(out->file_path());
  const TscUtcClock* const clock = utc ? &*utc : nullptr;
  auto exported = stream_export(o, *exporter, clock, from, to, *rule, timescale_ps, *out, bar);
  if (!exported) return report(exported.error());
  auto written = out->finish();
  if (!written) return report(written.error());
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export",
                                     "Export a loaded trace: VCD (GTKWave, PulseView), Perfetto (JSON or "
                                     "protobuf), or CSV");
  std::string formats, choices;
  for (const Exporter& exporter : exporters()) {
    formats += fmt::format("{}{}: {}", formats.empty() ? "" : "; ", exporter.name, exporter.description);
    choices += fmt::format("{}{}", choices.empty() ? "" : "|", exporter.name);
  }
  sub->add_option("--format", o->format, formats)->type_name(choices)->required();
  sub->add_option("-o,--output", o->output, "Write to FILE instead of standard output (- is standard output)")
      ->type_name("FILE");
  sub->add_flag("--force", o->force, "Overwrite an existing output file");
  sub->add_option("--from", o->from, "perfetto: start events of actions, PROBE[:CODE]")->type_name("P[:C]");
  add_pair_option(sub, o->pair);
  sub->add_option("--to", o->to, "perfetto: end events of actions, PROBE[:CODE]")->type_name("P[:C]");
  sub->add_option(
         "--timescale", o->timescale,
         "vcd: the time unit, 1, 10 or 100 of s, ms, us, ns or ps (default 1ns); coarser ones merge the "
         "polls within a unit")
      ->type_name("UNIT");
  sub->add_flag("--no-bus", o->no_bus,
                "vcd: leave out the probes' code bits NAME_code[i] (the lines D0..D7 hold the same bits)");
  sub->add_option(
         "--time", o->time,
         "relative (default: from the capture start) or utc: absolute times from the trace's PPS mapping "
         "(`ett analyze pps`): a utc column in CSV, Unix time in Perfetto, the VCD's $date")
      ->type_name("relative|utc");
  add_trace_option(sub, o->trace);
  add_db_option(sub, o->db);
  return {sub, [o] { return run_export(*o); }};
}

}  // namespace ett::cli
