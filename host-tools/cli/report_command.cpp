// report_command.cpp: `ett report -o report.html`: one self-contained HTML page about a loaded trace.
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "analysis/input.h"
#include "commands.h"
#include "export/html.h"
#include "export/output_file.h"
#include "progress.h"
#include "utc_columns.h"

namespace ett::cli {

namespace {

using namespace ett::host;

struct ReportOptions {
  std::string db = default_db_url();
  std::optional<int64_t> trace;
  std::string output;
  bool force = false;
  std::string pair = "same-code";
  std::string from, to, size_of_code;
  std::optional<double> pi_ns;
  std::vector<int64_t> baseline;  // compare with these traces' actions
  std::string time = "ns";        // or utc: the summary and the time axes in UTC (the PPS mapping)
};

int run_report(const ReportOptions& o) {
  if (o.from.empty() != o.to.empty()) return report({ErrorKind::Usage, "--from and --to go together"});
  if (!o.size_of_code.empty() && o.from.empty())
    return report({ErrorKind::Usage, "--size-of-code needs actions: give --from and --to"});
  if (!o.baseline.empty() && o.from.empty())
    return report({ErrorKind::Usage, "--baseline compares actions: give --from and --to"});
  auto utc = parse_time_option(o.time);
  if (!utc) return report(utc.error());
  auto exists = require_database(o.db);
  if (!exists) return report(exists.error());
  if (auto free = refuse_existing_output(o.output, o.force); !free) return report(free.error());
  // Ctrl-C ends the run at once and removes the file this run was creating.
  Progress bar("report");
  if (o.output == "-") bar.data_to_stdout();
  bar.phase("reading the trace");
  auto loaded = open_trace(o.db, o.trace);
  if (!loaded) return report(loaded.error());
  const Capture& capture = loaded->capture;
  const int64_t id = capture.info.trace_id;
  std::optional<UtcClock> clock;
  if (*utc) {
    auto found = utc_clock(*loaded->db, capture.info);
    if (!found) return report(found.error());
    clock = *found;
  }

  // The precision table: this trace's own when it is a calibration, else the stored one of its machine.
  std::optional<PrecisionResult> precision;
  bar.phase("analysing trace " + std::to_string(id));
  if (capture.info.mode == "calibrate") {
    auto result = analyze_precision(capture);
    if (!result) return report(result.error());
    precision = *result;
  } else {
    auto calibration = find_precision(*loaded->db, id);
    if (!calibration) return report(calibration.error());
    if (*calibration) {
      auto source = load_capture(*loaded->db, (*calibration)->trace_id);
      if (!source) return report(source.error());
      auto result = analyze_precision(*source);
      if (!result) return report(result.error());
      precision = *result;
    }
  }
  std::optional<DurationsResult> durations;
  std::optional<FitResult> fit;
  if (!o.from.empty()) {
    auto from = parse_endpoint(o.from);
    if (!from) return report(from.error());
    auto to = parse_endpoint(o.to);
    if (!to) return report(to.error());
    auto rule = parse_pair_rule(o.pair);
    if (!rule) return report(rule.error());
    auto checked = check_endpoints(capture.info, *from, *to);
    if (!checked) return report(checked.error());
    auto pi = resolve_pi(*loaded->db, id, o.pi_ns);
    if (!pi) return report(pi.error());
    auto paired = pair_actions(capture.events, *from, *to, pi->pi_ns, *rule);
    if (!paired) return report(paired.error());
    paired->pi_trace_id = pi->trace_id;
    mark_stalls(*paired, StallMarks(capture.stalls, capture.events), capture.info.stall_count);
    durations = std::move(*paired);  // 4.7 M actions at 10 M events: 300 MB not to copy
    if (!o.size_of_code.empty()) {
      auto sizes = parse_size_of_code(o.size_of_code);
      if (!sizes) return report(sizes.error());
      auto fitted = fit_durations(durations->actions, *sizes);
      if (!fitted) return report(fitted.error());
      fit = std::move(*fitted);
    }
  }
  std::optional<ReportComparison> comparison;
  if (!o.baseline.empty()) {
    comparison.emplace();
    comparison->baseline_traces = o.baseline;
    CompareSide baseline, candidate;
    double pi = durations->pi_ns;
    auto split = [](const std::vector<Action>& actions, CompareSide& side) {
      for (const Action& action : actions) {
        if (action.stall_ns > 0)
          ++side.stalled;
        else
          side.durations_ns.push_back(action.duration_ns);
      }
    };
    for (int64_t baseline_trace : o.baseline) {
      auto paired = stored_actions(*loaded->db, baseline_trace, durations->from, durations->to,
                                   *parse_pair_rule(o.pair), o.pi_ns);
      if (!paired) return report(paired.error());
      pi = std::max(pi, paired->pi_ns);
      split(paired->actions, baseline);
    }
    split(durations->actions, candidate);
    CompareOptions options;
    options.pi_ns = pi;
    auto compared = compare_durations(baseline, candidate, options);
    if (!compared) return report(compared.error());
    comparison->baseline_ns = baseline.durations_ns;
    comparison->candidate_ns = candidate.durations_ns;
    comparison->result = *compared;
  }
  // The names `ett label` gave the probes: the report's lanes, legends and tables use them.
  std::map<int, std::string> labels;
  const SqlValue label_params[] = {id};
  auto named = loaded->db->query(
      "SELECT probe, label FROM probes WHERE trace_id = $1 AND label IS NOT NULL ORDER BY probe",
      label_params);
  if (!named) return report(named.error());
  for (const auto& row : named->rows)
    if (row.size() == 2 && row[0] && row[1]) labels[std::stoi(*row[0])] = *row[1];
  // The stored PPS mapping, if `ett analyze pps` made one: its table is in the report either way.
  auto pps = find_pps(*loaded->db, id);
  if (!pps) return report(pps.error());
  bar.phase("writing " + o.output);
  const std::string html =
      export_html({&capture, precision ? &*precision : nullptr, durations ? &*durations : nullptr,
                   fit ? &*fit : nullptr, comparison ? &*comparison : nullptr, labels,
                   clock ? &clock->mapping : nullptr, *pps ? &**pps : nullptr});
  auto written = write_output(o.output, html, o.force);
  if (!written) return report(written.error());
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub =
      app.add_subcommand("report",
                         "Write a self-contained HTML report of a loaded trace: summary, "
                         "precision, zoomable timeline, durations, fit (offline, charts by uPlot)");
  sub->add_option("-o,--output", o->output, "The HTML file")->type_name("FILE")->required();
  sub->add_flag("--force", o->force, "Overwrite an existing output file");
  sub->add_option("--from", o->from, "Start events of actions, PROBE[:CODE]")->type_name("P[:C]");
  add_pair_option(sub, o->pair);
  sub->add_option("--to", o->to, "End events of actions, PROBE[:CODE]")->type_name("P[:C]");
  sub->add_option("--size-of-code", o->size_of_code,
                  "The size each start code stands for: \"1=16,2=500\" (fit plot)")
      ->type_name("C=S,...");
  sub->add_option("--pi-ns", o->pi_ns,
                  "Precision bound to quote, ns (default: the stored one of this machine)")
      ->type_name("NS")
      ->check(non_negative_number());
  sub->add_option(
         "--baseline", o->baseline,
         "Baseline trace ids T1,T2,...: a comparison section with both duration distributions on one "
         "axis (this trace is the candidate; needs --from/--to)")
      ->type_name("ID")
      ->delimiter(',');
  sub->add_option(
         "--time", o->time,
         "ns, or utc: the UTC of time 0 in the summary and the time axes in UTC time of day, through "
         "the trace's PPS mapping (`ett analyze pps`)")
      ->type_name("ns|utc")
      ->capture_default_str();
  add_trace_option(sub, o->trace);
  add_db_option(sub, o->db);
  return {sub, [o] { return run_report(*o); }};
}

}  // namespace ett::cli
