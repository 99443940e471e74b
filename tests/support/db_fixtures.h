// db_fixtures.h: what the database tests share: the real `ett` binary run as a user runs it, and a database
// of schema version 1 written as the ett of then did (its DDL spelled out here, not derived from today's
// code).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/schema.h"
#include "image/trace_image.h"

namespace ett::test {

struct CommandResult {
  int status = -1;
  std::string out;
};

// Runs the real `ett` binary (ETT_BIN_DIR) with `args` through the shell; stderr goes along with stdout.
inline CommandResult ett(const std::string& args) {
  CommandResult result;
  std::FILE* pipe = ::popen((std::string(ETT_BIN_DIR) + "/ett " + args + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  std::array<char, 4096> buffer;
  size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), got);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A RowSink that counts the batches it is handed and keeps the rows.
struct CountedRows final : host::RowSink {
  host::Status columns(std::span<const std::string> names) override { return all.columns(names); }
  host::Status rows(std::span<const std::vector<host::DbValue>> batch) override {
    ++batches;
    return all.rows(batch);
  }
  host::CollectRows all;
  size_t batches = 0;
};

// A RowSink whose every batch of rows fails ("no room").
struct RefusingRows final : host::RowSink {
  host::Status columns(std::span<const std::string>) override { return {}; }
  host::Status rows(std::span<const std::vector<host::DbValue>>) override {
    return host::make_error(host::ErrorKind::Io, "no room");
  }
};

// The tables of schema version 1 (no ett_schema, events without flags and aux, no events indexes). traces has
// not changed since, so its DDL is today's.
inline std::vector<std::string> version1_statements(host::DbEngine engine) {
  const bool pg = engine == host::DbEngine::Postgres;
  const std::string big = pg ? "BIGINT" : "INTEGER", small = pg ? "SMALLINT" : "INTEGER";
  const std::string rowid = pg ? "" : " WITHOUT ROWID";
  return {
      host::schema_statements(engine).at(1),
      "CREATE UNIQUE INDEX traces_identity ON traces (disk_uuid, session, content_hash)",
      "CREATE TABLE events (\n  trace_id " + big + " NOT NULL,\n  seq " + big + " NOT NULL,\n  probe " +
          small + " NOT NULL,\n  code " + small + " NOT NULL,\n  tsc " + big + " NOT NULL,\n  time_ns " +
          big + ",\n  lines " + small + " NOT NULL,\n  PRIMARY KEY (trace_id, seq)\n)" + rowid,
      "CREATE TABLE probes (\n  trace_id " + big + " NOT NULL,\n  probe " + small +
          " NOT NULL,\n  label TEXT,\n  PRIMARY KEY (trace_id, probe)\n)" + rowid,
  };
}

// Creates the version-1 tables in `db` (opened without ensure_schema) and inserts the traces row of session
// `index` of `image` (as trace 1); its events are the caller's to insert. Returns the session's events.
inline std::vector<host::Event> write_version1_trace(host::Database& db, const std::string& image,
                                                     size_t index) {
  for (const std::string& statement : version1_statements(db.engine()))
    if (auto done = db.run_script(statement); !done) throw std::runtime_error(done.error().message);
  auto opened = host::TraceImage::open(image);
  if (!opened) throw std::runtime_error(opened.error().message);
  auto data = opened->read_session(index);
  if (!data) throw std::runtime_error(data.error().message);
  const host::TraceRow row = host::make_trace_row(opened->label(), data->summary, data->events);
  if (auto inserted = db.query(host::insert_trace_sql(), row.values); !inserted)
    throw std::runtime_error(inserted.error().message);
  return std::move(data->events);
}

}  // namespace ett::test
