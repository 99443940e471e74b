// sql_command.cpp: `ett sql "SELECT ..."` (or `ett sql -`: the SQL from standard input): ad-hoc SQL on the
// trace database.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>

#include "commands.h"
#include "common/text_input.h"
#include "data_output.h"
#include "db/schema.h"

namespace ett::cli {

namespace {

// SQL from standard input: at most this much (a script, not a data file).
constexpr uint64_t kMaxSqlBytes = uint64_t{16} << 20;

struct SqlOptions {
  std::string sql;
  bool csv = false;  // the older spelling of --format csv
  DataOutput out;
  std::string db = host::default_db_url();
  bool write = false;
};

// Whether the events table and the tables made from it are all there.
bool has_derived_tables(host::Database& database) {
  for (const char* table : {"events", "event_packs", "event_codes", "event_blocks"})
    if (auto has = host::has_table(database, table); !has || !*has) return false;
  return true;
}

// What the database says when a statement would write (SQLite, PostgreSQL).
bool is_read_only_refusal(const std::string& message) {
  return message.find("readonly") != std::string::npos || message.find("read-only") != std::string::npos;
}

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
  Database& database = **db;
  // Without --write the connection only reads: an UPDATE typed by mistake changes nothing.
  if (!options.write) {
    auto read_only =
        database.run_script(database.engine() == DbEngine::Sqlite ? "PRAGMA query_only = ON"
                                                                  : "SET default_transaction_read_only = on");
    if (!read_only) return report(read_only.error());
  }
  // Written as the rows are read (a SELECT of 10 M events is never held whole); nothing for statements
  // without results (CREATE INDEX, UPDATE, ...).
  RowOutput out(options.out, *format);
  auto ran = database.run_script_rows(options.sql, out);
  if (!ran) {
    HostError error = ran.error();
    if (!options.write && is_read_only_refusal(error.message))
      error.message += " (`ett sql` only reads; give --write to change the database)";
    return report(error);
  }
  auto written = out.finish();
  if (!written) return report(written.error());
  // The event rows may have changed: what analyses and exports read in their place (the packs, the tallies)
  // is made from them again, so that no reader sees the old events.
  // (A database whose tables were dropped by the statements has nothing of the kind left to make.)
  if (options.write && has_derived_tables(database)) {
    auto refreshed = database.run_script("BEGIN;\n" + refresh_derived_sql() + "COMMIT;");
    if (!refreshed) return report(refreshed.error());
  }
  return 0;
}

}  // namespace

Command add_sql_command(CLI::App& app) {
  auto options = std::make_shared<SqlOptions>();
  CLI::App* sub = app.add_subcommand("sql", "Run SQL on the trace database (tables: traces, events, probes)");
  sub->add_option("SQL", options->sql,
                  "The statement(s); the last one's rows are printed. - reads standard input")
      ->type_name("SQL")
      ->required();
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->add_flag("--csv", options->csv, "Same as --format csv");
  sub->add_flag("--write", options->write,
                "Allow statements that change the database (without it, only reads); the packed copy and "
                "tallies of the events are made again from the rows afterwards");
  add_db_option(sub, options->db);
  return {sub, [options] { return run_sql(*options); }};
}

}  // namespace ett::cli
