// export_command.cpp: `ett export --format vcd|perfetto|csv [-o FILE]`: a loaded trace for other tools.
#include <memory>
#include <optional>

#include "analysis_input.h"
#include "commands.h"
#include "export_csv.h"
#include "export_file.h"
#include "export_perfetto.h"
#include "export_vcd.h"

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
  std::string from, to;  // perfetto: actions
};

int run_export(const ExportOptions& o) {
  if (o.format != "vcd" && o.format != "perfetto" && o.format != "csv")
    return report({ErrorKind::Usage, "--format '" + o.format + "': expected vcd, perfetto or csv"});
  if (o.from.empty() != o.to.empty()) return report({ErrorKind::Usage, "--from and --to go together"});
  if (!o.from.empty() && o.format != "perfetto")
    return report({ErrorKind::Usage, "--from/--to (actions) only apply to --format perfetto"});
  std::optional<Endpoint> from, to;
  auto rule = parse_pair_rule(o.pair);
  if (!rule) return report(rule.error());
  if (!o.from.empty()) {
    auto f = parse_endpoint(o.from);
    if (!f) return report(f.error());
    auto t = parse_endpoint(o.to);
    if (!t) return report(t.error());
    from = *f;
    to = *t;
  }
  auto loaded = open_trace(o.db, o.trace);
  if (!loaded) return report(loaded.error());
  const Capture& capture = loaded->capture;
  std::string text;
  if (o.format == "vcd") {
    text = export_vcd(capture);
  } else if (o.format == "csv") {
    text = export_csv(capture);
  } else {
    std::vector<Action> actions;
    if (from) {
      auto checked = check_endpoints(capture.info, *from, *to);
      if (!checked) return report(checked.error());
      auto paired = pair_actions(capture.events, *from, *to, 0, *rule);
      if (!paired) return report(paired.error());
      actions = paired->actions;
    }
    text = export_perfetto(capture, actions);
  }
  auto written = write_output(o.output, text, o.force);
  if (!written) return report(written.error());
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "Export a loaded trace: VCD (GTKWave, PulseView), Perfetto/Chrome "
                                               "trace JSON, or CSV");
  sub->add_option("--format", o->format, "vcd, perfetto or csv")->required();
  sub->add_option("-o,--output", o->output, "Output file (default: standard output)");
  sub->add_flag("--force", o->force, "Overwrite an existing output file");
  sub->add_option("--from", o->from, "perfetto: start events of actions, PROBE[:CODE]");
  sub->add_option("--pair", o->pair, "Action pairing: same-code or fifo")->capture_default_str();
  sub->add_option("--to", o->to, "perfetto: end events of actions, PROBE[:CODE]");
  sub->add_option("--trace", o->trace, "Trace id (default: the most recently loaded trace)");
  sub->add_option("--db", o->db, "sqlite:FILE or postgresql://... (default: $ETT_DB or sqlite:traces.db)")
      ->capture_default_str();
  return {sub, [o] { return run_export(*o); }};
}

}  // namespace ett::cli
