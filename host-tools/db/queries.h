// queries.h: the named, prepared queries of `ett query` (the same SQL runs on SQLite and PostgreSQL).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.h"

namespace ett::host {

struct NamedQuery {
  const char* name;
  const char* description;
  // Parameters after the trace ($1 is always the trace when takes_trace): shown in usage as NAME.
  std::vector<const char*> params;
  bool takes_trace;
  const char* sql;
};

const std::vector<NamedQuery>& named_queries();
const NamedQuery* find_named_query(std::string_view name);

// Runs `query` for `trace` (ignored when the query takes none) with `args` as its other parameters
// (integers where they parse as such), its rows handed to `sink` as they are read (Database::query_rows).
Status run_named_query(Database& db, const NamedQuery& query, int64_t trace,
                       std::span<const std::string> args, RowSink& sink);
// The same, every row kept.
Expected<ResultTable> run_named_query(Database& db, const NamedQuery& query, int64_t trace,
                                      std::span<const std::string> args);

}  // namespace ett::host
