// sql_command.cpp: `ett sql "SELECT ..."` (or `ett sql -`: the SQL from standard input): ad-hoc SQL on the
// trace database.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>

#include "commands.h"
#include "common/text_input.h"
#include "data_output.h"

namespace ett::cli {

namespace {

// SQL from standard input: at most this much (a script, not a data file).
constexpr uint64_t kMaxSqlBytes = uint64_t{16} << 20;

struct SqlOptions {
  std::string sql;
  bool csv = false;  // the older spelling of --format csv
  DataOutput out;
  std::string db = host::default_db_url();
};

int run_sql(SqlOptions& options) {
  using namespace ett::host;
  if (options.csv) options.out.format = "csv";
  auto format = data_format(options.out);
  if (!format) return report(format.error());
  if (options.sql == "-") {
    auto text = read_text_file("-", kMaxSqlBytes, "the SQL");
    if (!text) return report(text.error());
    options.sql = std::move(*text);
  }
  if (options.sql.find_first_not_of(" \t\r\n") == std::string::npos)
    return report({ErrorKind::Usage, "no SQL given (standard input was empty)"});
  auto exists = require_database(options.db);
  if (!exists) return report(exists.error());
  auto db = open_database(options.db);
  if (!db) return report(db.error());
  // Written as the rows are read (a SELECT of 10 M events is never held whole); nothing for statements
  // without results (CREATE INDEX, UPDATE, ...).
  RowOutput out(options.out, *format);
  auto ran = (*db)->run_script_rows(options.sql, out);
  if (!ran) return report(ran.error());
  auto written = out.finish();
  return written ? 0 : report(written.error());
}

}  // namespace

Command add_sql_command(CLI::App& app) {
  auto options = std::make_shared<SqlOptions>();
  CLI::App* sub = app.add_subcommand("sql", "Run SQL on the trace database (tables: traces, events, probes)");
  sub->add_option("SQL", options->sql,
                  "The statement(s); the last one's rows are printed. - reads standard input")
      ->required();
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->add_flag("--csv", options->csv, "Same as --format csv");
  add_db_option(sub, options->db);
  return {sub, [options] { return run_sql(*options); }};
}

}  // namespace ett::cli
