// export_command.cpp: `ett export --format F [-o FILE]`: a loaded trace for other tools (export/exporters.h).
#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "analysis/input.h"
#include "commands.h"
#include "export/exporters.h"
#include "export/output_file.h"
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
  std::string from, to;  // perfetto: actions
};

// The output file this run created: removed when the run returns before the export is complete.
struct CreatedFile {
  std::string path;
  ~CreatedFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

int run_export(const ExportOptions& o) {
  const Exporter* exporter = find_exporter(o.format);
  if (!exporter)
    return report({ErrorKind::Usage, "--format '" + o.format + "': expected " + exporter_names()});
  if (o.from.empty() != o.to.empty()) return report({ErrorKind::Usage, "--from and --to go together"});
  if (!o.from.empty() && !exporter->takes_actions)
    return report(
        {ErrorKind::Usage, fmt::format("--from/--to (actions) do not apply to --format {}", exporter->name)});
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
  // The output first: "already exists" before seconds of reading. A file this run creates is removed again
  // when the export does not complete (an error, or Ctrl-C, which ends the run at once).
  const bool to_file = !o.output.empty() && o.output != "-";
  const bool created = to_file && ::access(o.output.c_str(), F_OK) != 0;
  auto out = TextOut::open(o.output, o.force);
  if (!out) return report(out.error());
  CreatedFile incomplete{created ? o.output : ""};
  Progress bar("export");
  if (!to_file) bar.data_to_stdout();
  if (created) bar.remove_on_interrupt(o.output);
  if (to_file) bar.watch_file(o.output);
  bar.phase("reading the trace");
  auto loaded = open_trace(o.db, o.trace);
  if (!loaded) return report(loaded.error());
  const Capture& capture = loaded->capture;
  std::vector<Action> actions;
  if (from) {
    auto checked = check_endpoints(capture.info, *from, *to);
    if (!checked) return report(checked.error());
    auto paired = pair_actions(capture.events, *from, *to, 0, *rule);
    if (!paired) return report(paired.error());
    actions = paired->actions;
  }
  // Written as it is produced: the text of 10 M events would be gigabytes in memory.
  bar.phase(fmt::format("writing {} events of trace {} as {}", capture.events.size(), capture.info.trace_id,
                        exporter->name));
  exporter->write(ExportInput{capture, actions}, *out);
  auto written = out->finish();
  if (!written) return report(written.error());
  bar.keep();
  incomplete.path.clear();
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export",
                                     "Export a loaded trace: VCD (GTKWave, PulseView), Perfetto/Chrome "
                                     "trace JSON, or CSV");
  std::string formats;
  for (const Exporter& exporter : exporters())
    formats += fmt::format("{}{}: {}", formats.empty() ? "" : "; ", exporter.name, exporter.description);
  sub->add_option("--format", o->format, formats)->required();
  sub->add_option("-o,--output", o->output,
                  "Write to FILE instead of standard output (- is standard output)");
  sub->add_flag("--force", o->force, "Overwrite an existing output file");
  sub->add_option("--from", o->from, "perfetto: start events of actions, PROBE[:CODE]");
  add_pair_option(sub, o->pair);
  sub->add_option("--to", o->to, "perfetto: end events of actions, PROBE[:CODE]");
  add_trace_option(sub, o->trace);
  add_db_option(sub, o->db);
  return {sub, [o] { return run_export(*o); }};
}

}  // namespace ett::cli
