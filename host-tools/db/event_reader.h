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
  int64_t time_ns = 0;  // the loader's integer ns (when has_time_ns; else 0)
  uint8_t probe = 0;
  uint8_t code = 0;
  uint8_t lines = 0;
  bool has_time_ns = false;  // time_ns is NULL when the trace has no TSC rate (or was not asked for)
};

// Which columns a read needs beyond seq, probe, code, tsc and lines: time_ns is not needed by a reader that
// computes times from the TSC (the trace has a TSC rate), and not reading it saves a column per row.
struct EventColumns {
  bool time_ns = true;
};

// Takes the next rows of the trace, in seq order; an error stops the read and is returned by it.
using EventBatchSink = std::function<Status(std::span<const EventRow> rows)>;

// Rows per batch: big enough that the call per batch costs nothing, small enough to stay in the cache.
inline constexpr size_t kEventBatchRows = 4096;

// A part of a read: the rows with seq in [first, last].
struct SeqRange {
  int64_t first = 0;
  int64_t last = 0;
};

// Takes a trace read as parts at once (one connection and thread per part), each part's rows in seq order
// and each part where it belongs: a caller that places the rows itself holds no part in a buffer.
class EventPartSink {
 public:
  virtual ~EventPartSink() = default;
  // Before any rows: the parts, in seq order, together covering every seq of the trace.
  virtual Status begin(std::span<const SeqRange> parts) = 0;
  // The next rows of `part`, in seq order; called on the part's own thread (parts at the same time).
  virtual Status take(size_t part, std::span<const EventRow> rows) = 0;
  // The rows of `part` handed on so far are void: the part is read again from its start (its rows were not
  // in seq order). An error when they cannot be taken back.
  virtual Status restart(size_t part) = 0;
  // Whether `part` can be restarted once its rows were handed on; a reader reads a part that cannot in a way
  // that needs no restart (PostgreSQL: ORDER BY, the index scan; a plain scan costs less).
  virtual bool restartable(size_t /*part*/) const { return true; }
};

// The engines' readers (Database::read_event_parts calls them): SQLite through one aggregate function per
// part; PostgreSQL through COPY ... TO STDOUT (FORMAT binary).
Status read_sqlite_events(sqlite3* db, const std::string& path, int64_t trace_id, const EventColumns& columns,
                          EventPartSink& sink);
Status read_postgres_events(pg_conn* conn, int64_t trace_id, const EventColumns& columns,
                            EventPartSink& sink);

// Tells the sink of a stream that the rows handed on so far are void: the stream starts again from its first
// row (the first part's rows came out of seq order and it is read again in order).
using StreamRestart = std::function<Status()>;

// A parted read (`read`) handed to `sink` as one stream in seq order: the first part as it comes, the others
// held in memory until their turn (Database::read_events). With `restart`, the sink can take the stream back,
// and the first part is read the way that costs least (PostgreSQL: a plain scan, checked for order).
Status read_in_order(const std::function<Status(EventPartSink& parts)>& read, const EventBatchSink& sink,
                     const StreamRestart& restart = {});

}  // namespace ett::host
