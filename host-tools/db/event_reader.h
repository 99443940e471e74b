// event_reader.h: the typed, streaming read of one trace's events, what the analyses and exports start from:
// rows in seq order, handed over in batches as numbers (no text per cell, no result set held whole).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "common/status.h"

struct sqlite3;
struct pg_conn;

namespace ett::host {

// One row of `events`.
struct EventRow {
  uint64_t seq = 0;
  uint64_t tsc = 0;
  int64_t time_ns = 0;  // the loader's integer ns (valid when has_time_ns)
  uint8_t probe = 0;
  uint8_t code = 0;
  uint8_t lines = 0;
  bool has_time_ns = false;  // time_ns is NULL when the trace has no TSC rate
};

// Takes the next rows of the trace, in seq order; an error stops the read and is returned by it.
using EventBatchSink = std::function<Status(std::span<const EventRow> rows)>;

// Rows per batch: big enough that the call per batch costs nothing, small enough to stay in the cache.
inline constexpr size_t kEventBatchRows = 4096;

// The engines' readers (Database::read_events calls them): SQLite through one prepared statement and its
// column accessors; PostgreSQL through COPY ... TO STDOUT (FORMAT binary).
Status read_sqlite_events(sqlite3* db, const std::string& path, int64_t trace_id, const EventBatchSink& sink);
Status read_postgres_events(pg_conn* conn, int64_t trace_id, const EventBatchSink& sink);

}  // namespace ett::host
