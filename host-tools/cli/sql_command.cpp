// sql_command.cpp: `ett sql "SELECT ..."`: ad-hoc SQL on the trace database.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "db/table_output.h"

namespace ett::cli {

namespace {

struct SqlOptions {
  std::string sql;
  bool csv = false;
  std::string db = host::default_db_url();
};

int run_sql(const SqlOptions& options) {
  using namespace ett::host;
  auto db = open_database(options.db);
  if (!db) return report(db.error());
  auto table = (*db)->run_script(options.sql);
  if (!table) return report(table.error());
  if (table->columns.empty()) return 0;  // a statement without results (CREATE INDEX, UPDATE, ...)
  const std::string text = options.csv ? format_csv(*table) : format_table(*table);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

Command add_sql_command(CLI::App& app) {
  auto options = std::make_shared<SqlOptions>();
  CLI::App* sub = app.add_subcommand("sql", "Run SQL on the trace database (tables: traces, events, probes)");
  sub->add_option("SQL", options->sql, "The statement(s); the last one's rows are printed")->required();
  sub->add_flag("--csv", options->csv, "CSV instead of an aligned table");
  add_db_option(sub, options->db);
  return {sub, [options] { return run_sql(*options); }};
}

}  // namespace ett::cli
