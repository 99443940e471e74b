// query_command.cpp: `ett query NAME [PARAMS]`: runs one of the project's named, prepared queries.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "data_output.h"
#include "db/queries.h"
#include "db/table_output.h"

namespace ett::cli {

namespace {

struct QueryOptions {
  std::string name;
  std::vector<std::string> args;
  std::optional<int64_t> trace;
  bool csv = false;  // the older spelling of --format csv
  DataOutput out;
  std::string db = host::default_db_url();
};

std::string query_list() {
  std::string out = "named queries (ett query NAME [PARAMS]; --trace T, default the newest trace):\n";
  for (const host::NamedQuery& query : host::named_queries()) {
    std::string usage = query.name;
    for (const char* param : query.params) usage += std::string(" ") + param;
    out += fmt::format("  {:<22} {}\n", usage, query.description);
  }
  return out;
}

int run_query(QueryOptions& options) {
  using namespace ett::host;
  if (options.csv) options.out.format = "csv";
  auto format = data_format(options.out);
  if (!format) return report(format.error());
  if (options.name.empty() || options.name == "list") {
    std::fputs(query_list().c_str(), stdout);
    return 0;
  }
  const NamedQuery* query = find_named_query(options.name);
  if (!query)
    return report({ErrorKind::Usage, "no query named '" + options.name + "' (`ett query` lists them)"});
  auto exists = require_database(options.db);
  if (!exists) return report(exists.error());
  auto db = open_database(options.db);
  if (!db) return report(db.error());
  int64_t trace = 0;
  if (query->takes_trace) {
    if (options.trace) {
      trace = *options.trace;
    } else {
      auto latest = latest_trace(**db);
      if (!latest) return report(latest.error());
      trace = *latest;
    }
  }
  auto table = run_named_query(**db, *query, trace, options.args);
  if (!table) return report(table.error());
  auto written = emit(options.out, render_table(*table, *format));
  return written ? 0 : report(written.error());
}

}  // namespace

Command add_query_command(CLI::App& app) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* sub =
      app.add_subcommand("query", "Run a named query on the trace database (without NAME: list them)");
  sub->add_option("NAME", options->name, "traces, event, window, probe, codes, probes");
  sub->add_option("PARAMS", options->args, "The query's values, in order");
  add_trace_option(sub, options->trace);
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->add_flag("--csv", options->csv, "Same as --format csv");
  add_db_option(sub, options->db);
  return {sub, [options] { return run_query(*options); }};
}

}  // namespace ett::cli
