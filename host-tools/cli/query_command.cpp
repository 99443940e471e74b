// query_command.cpp: `ett query NAME [PARAMS]`: runs one of the project's named, prepared queries.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/input.h"
#include "commands.h"
#include "data_output.h"
#include "db/queries.h"
#include "db/table_output.h"
#include "utc_columns.h"

namespace ett::cli {

namespace {

struct QueryOptions {
  std::string name;
  std::vector<std::string> args;
  std::optional<int64_t> trace;
  bool csv = false;         // the older spelling of --format csv
  std::string time = "ns";  // or utc: a time_utc column through the trace's PPS mapping
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
  auto utc = parse_time_option(options.time);
  if (!utc) return report(utc.error());
  if (*utc && !query->takes_trace)
    return report({ErrorKind::Usage, fmt::format("--time utc: query {} lists no events of a trace (event, "
                                                 "window and probe do)",
                                                 query->name)});
  // The mapping is read when --time utc asks for it or a *_NS value is given as a UTC time.
  std::optional<UtcClock> clock;
  auto mapping = [&]() -> host::Status {
    if (clock) return {};
    ETT_TRY_ASSIGN(CaptureInfo info, load_capture_info(**db, trace));
    ETT_TRY_ASSIGN(clock, utc_clock(**db, info));
    return {};
  };
  if (*utc) {
    auto found = mapping();
    if (!found) return report(found.error());
  }
  std::vector<std::string> args = options.args;
  for (size_t i = 0; i < args.size() && i < query->params.size(); ++i) {
    if (!std::string_view(query->params[i]).ends_with("_NS") || args[i].find('T') == std::string::npos)
      continue;
    auto instant = parse_utc_instant(args[i]);
    if (!instant) return report(instant.error());
    auto found = mapping();
    if (!found) return report(found.error());
    args[i] = std::to_string(std::llround(clock->capture_ns(*instant)));
  }
  // Written as the rows are read: a window of 10 M events is never held whole.
  RowOutput out(options.out, *format);
  std::optional<TimeUtcColumn> with_utc;
  if (*utc) with_utc.emplace(out, *clock, query->name);
  RowSink& sink = with_utc ? static_cast<RowSink&>(*with_utc) : out;
  auto ran = run_named_query(**db, *query, trace, args, sink);
  if (!ran) return report(ran.error());
  auto written = out.finish();
  return written ? 0 : report(written.error());
}

}  // namespace

Command add_query_command(CLI::App& app) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* sub =
      app.add_subcommand("query", "Run a named query on the trace database (without NAME: list them)");
  sub->add_option("NAME", options->name, "traces, event, window, probe, codes, probes")->type_name("NAME");
  sub->add_option("PARAMS", options->args, "The query's values, in order")->type_name("VALUE");
  add_trace_option(sub, options->trace);
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->add_flag("--csv", options->csv, "Same as --format csv");
  sub->add_option("--time", options->time,
                  "ns, or utc: the events also get time_utc (ISO-8601, ns) through the trace's PPS mapping "
                  "(`ett analyze pps`)")
      ->type_name("ns|utc")
      ->capture_default_str();
  add_db_option(sub, options->db);
  return {sub, [options] { return run_query(*options); }};
}

}  // namespace ett::cli
