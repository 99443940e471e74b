// schema_doc.cpp: docs/reference/schema.md, from the DDL the database code runs (host-tools/db/schema.cpp):
// each table's columns on both engines, the note of each table, then the DDL itself.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "db/schema.h"
#include "reference.h"

namespace ett::reference {

namespace {

struct Column {
  std::string name;
  std::string sqlite;
  std::string postgres;
};

struct Table {
  std::string name;
  std::vector<Column> columns;
};

// Every statement of an engine, in the order a database gets them (the created-on-first-use tables last).
std::vector<std::string> statements(host::DbEngine engine) {
  std::vector<std::string> out = host::schema_statements(engine);
  out.push_back(host::precision_table_sql(engine));
  out.push_back(host::pps_table_sql(engine));
  return out;
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \n") - first + 1);
}

// "CREATE TABLE IF NOT EXISTS name (\n  col TYPE ...,\n  PRIMARY KEY (...)\n)": the name and each column's
// definition; a partition (PARTITION OF) has none of its own.
std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> parse(
    const std::vector<std::string>& ddl) {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> tables;
  for (const std::string& statement : ddl) {
    size_t at = statement.find("CREATE TABLE ");
    if (at == std::string::npos) continue;
    at += 13;
    if (statement.compare(at, 14, "IF NOT EXISTS ") == 0) at += 14;
    const size_t name_end = statement.find_first_of(" (", at);
    std::pair<std::string, std::vector<std::pair<std::string, std::string>>> table{
        statement.substr(at, name_end - at), {}};
    const size_t open = statement.find('(', name_end);
    if (open != std::string::npos && statement.compare(name_end, 2, " (") == 0) {
      int depth = 0;
      size_t start = open + 1;
      for (size_t i = open; i < statement.size(); ++i) {
        const char c = statement[i];
        if (c == '(') ++depth;
        if (c == ')' && --depth == 0) {
          const std::string last = trim(statement.substr(start, i - start));
          if (!last.empty() && last.rfind("PRIMARY KEY", 0) != 0)
            table.second.emplace_back(last.substr(0, last.find(' ')), last.substr(last.find(' ') + 1));
          break;
        }
        if (c == ',' && depth == 1) {
          const std::string definition = trim(statement.substr(start, i - start));
          if (definition.rfind("PRIMARY KEY", 0) != 0)
            table.second.emplace_back(definition.substr(0, definition.find(' ')),
                                      definition.substr(definition.find(' ') + 1));
          start = i + 1;
        }
      }
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

std::string script(const std::vector<std::string>& ddl) {
  std::string out;
  for (const std::string& statement : ddl) out += statement + ";\n\n";
  return out.substr(0, out.size() - 1);
}

}  // namespace

host::Expected<std::string> schema_doc(const std::string&) {
  const std::vector<std::string> sqlite_ddl = statements(host::DbEngine::Sqlite);
  const std::vector<std::string> postgres_ddl = statements(host::DbEngine::Postgres);
  const auto sqlite = parse(sqlite_ddl);
  const auto postgres = parse(postgres_ddl);
  // The tables in PostgreSQL's order (it has one more, the default partition).
  std::vector<Table> tables;
  for (const auto& parsed : postgres) {
    Table table{parsed.first, {}};
    const auto on_sqlite =
        std::find_if(sqlite.begin(), sqlite.end(), [&](const auto& t) { return t.first == parsed.first; });
    for (const auto& [column, definition] : parsed.second) {
      std::string lite = "-";
      if (on_sqlite != sqlite.end())
        for (const auto& [other, other_definition] : on_sqlite->second)
          if (other == column) lite = other_definition;
      table.columns.push_back({column, lite, definition});
    }
    tables.push_back(std::move(table));
  }
  for (const auto& parsed : sqlite)
    if (std::none_of(tables.begin(), tables.end(), [&](const Table& t) { return t.name == parsed.first; }))
      return host::make_error(host::ErrorKind::Usage, "table " + parsed.first + " exists on SQLite only");

  std::string out = fmt::format(
      "# Trace database schema\n\n"
      "Schema version {} (the one row of `ett_schema`); the same tables on SQLite and PostgreSQL. "
      "`analysis_precision` and `pps_mapping` are created on first use.\n",
      host::kSchemaVersion);
  for (const Table& table : tables) {
    const auto notes = host::table_notes();
    const auto note = std::find_if(notes.begin(), notes.end(),
                                   [&](const host::TableNote& n) { return table.name == n.table; });
    if (note == notes.end())
      return host::make_error(host::ErrorKind::Usage,
                              "table " + table.name + " has no note in host::table_notes() (db/schema.cpp)");
    out += fmt::format("\n## {}\n\n{}\n", table.name, note->note);
    if (table.columns.empty()) continue;
    out += "\n| column | SQLite | PostgreSQL |\n| --- | --- | --- |\n";
    for (const Column& column : table.columns)
      out += fmt::format("| `{}` | {} | {} |\n", column.name, cell(column.sqlite), cell(column.postgres));
  }
  out += "\n## DDL\n\nSQLite:\n\n```sql\n" + script(sqlite_ddl) + "```\n\nPostgreSQL:\n\n```sql\n" +
         script(postgres_ddl) + "```\n";
  return out;
}

}  // namespace ett::reference
