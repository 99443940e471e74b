// label_command.cpp: `ett label --probe P "node A"`: names a probe of a trace (shown by the queries).
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "common/terminal_text.h"
#include "db/database.h"

namespace ett::cli {

namespace {

struct LabelOptions {
  std::optional<int64_t> trace;
  int64_t probe = 0;
  std::string label;
  std::string db = host::default_db_url();
};

int run_label(const LabelOptions& options) {
  using namespace ett::host;
  auto exists = require_database(options.db);
  if (!exists) return report(exists.error());
  auto db = open_database(options.db);
  if (!db) return report(db.error());
  int64_t trace = 0;
  if (options.trace) {
    trace = *options.trace;
  } else {
    auto latest = latest_trace(**db);
    if (!latest) return report(latest.error());
    trace = *latest;
  }
  const SqlValue params[] = {trace, options.probe, options.label};
  auto updated =
      (*db)->query("UPDATE probes SET label = $3 WHERE trace_id = $1 AND probe = $2 RETURNING probe", params);
  if (!updated) return report(updated.error());
  if (updated->rows.empty())
    return report({ErrorKind::Usage, "trace " + std::to_string(trace) + " has no probe " +
                                         std::to_string(options.probe) + " (ett query probes lists them)"});
  std::printf("trace %lld probe %lld: %s\n", static_cast<long long>(trace),
              static_cast<long long>(options.probe), escape_control_characters(options.label).c_str());
  return 0;
}

}  // namespace

Command add_label_command(CLI::App& app) {
  auto options = std::make_shared<LabelOptions>();
  CLI::App* sub = app.add_subcommand("label", "Name a probe of a loaded trace");
  sub->add_option("LABEL", options->label, "The name, e.g. \"node A\"")->type_name("LABEL")->required();
  sub->add_option("--probe", options->probe, "Probe number (from 1)")->type_name("PROBE")->required();
  add_trace_option(sub, options->trace);
  add_db_option(sub, options->db);
  return {sub, [options] { return run_label(*options); }};
}

}  // namespace ett::cli
