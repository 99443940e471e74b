// event_reader_sqlite.cpp: a trace's events from SQLite: from its event_packs (db/event_packs.h) or, for a
// trace without them or a read that needs time_ns, from its events rows through prepared statements read with
// the typed accessors (no text conversion per cell), a big trace as two halves on two connections at once.
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "db/event_packs.h"
#include "db/event_reader_parts.h"

namespace ett::host {

namespace {

struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// Below this many events one statement reads them all: a second connection would cost more than it saves.
constexpr int64_t kSplitEvents = int64_t{1} << 18;

Status sqlite_error(sqlite3* db, const std::string& path, const char* what) {
  return make_error(ErrorKind::Io, fmt::format("{}: {}: {}", path, what, sqlite3_errmsg(db)));
}

Expected<Statement> prepare(sqlite3* db, const std::string& path, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK)
    return sqlite_error(db, path, "reading events").failure();
  return Statement(raw);
}

// The lowest or highest seq of the trace (nullopt: no events): one step down the primary key.
Expected<std::optional<int64_t>> end_seq(sqlite3* db, const std::string& path, int64_t trace_id, bool last) {
  ETT_TRY_ASSIGN(Statement statement,
                 prepare(db, path,
                         last ? "SELECT seq FROM events WHERE trace_id = ?1 ORDER BY seq DESC LIMIT 1"
                              : "SELECT seq FROM events WHERE trace_id = ?1 ORDER BY seq LIMIT 1"));
  sqlite3_bind_int64(statement.get(), 1, trace_id);
  const int step = sqlite3_step(statement.get());
  if (step == SQLITE_ROW) return std::optional<int64_t>(sqlite3_column_int64(statement.get(), 0));
  if (step == SQLITE_DONE) return std::optional<int64_t>();
  return sqlite_error(db, path, "reading events").failure();
}

// What the aggregate ett_read_events() fills while its statement runs: the rows in a batch, handed to the
// sink when full; the sink's error (or a stop) ends the statement through an SQL error.
struct Collector {
  const EventBatchSink* sink = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::vector<EventRow> batch;
  Status failed;
  bool stopped = false;
  bool out_of_order = false;
  bool handed_on = false;  // a batch went to the sink
  bool any = false;
  uint64_t last_seq = 0;
  uint64_t end_seq = 0;  // rows from this seq on are not the range's: the scan ends at the first
  bool reached_end = false;
};

// ett_read_events(seq, probe, code, tsc, lines[, time_ns]), an aggregate: each row's values arrive through
// sqlite3_value_* in one sqlite3_step() for the whole scan. Stepping row by row and reading the cells with
// sqlite3_column_* cost twice the instructions per row (an interpreter exit and entry per row, a statement
// mutex and a type check per cell).
void collect_row(sqlite3_context* context, int count, sqlite3_value** values) {
  auto& collector = *static_cast<Collector*>(sqlite3_user_data(context));
  EventRow& row = collector.batch.emplace_back();
  row.seq = static_cast<uint64_t>(sqlite3_value_int64(values[0]));
  row.probe = static_cast<uint8_t>(sqlite3_value_int(values[1]));
  row.code = static_cast<uint8_t>(sqlite3_value_int(values[2]));
  row.tsc = static_cast<uint64_t>(sqlite3_value_int64(values[3]));
  row.lines = static_cast<uint8_t>(sqlite3_value_int(values[4]));
  row.has_time_ns = count > 5 && sqlite3_value_type(values[5]) != SQLITE_NULL;
  row.time_ns = row.has_time_ns ? sqlite3_value_int64(values[5]) : 0;
  // The primary key's range scan visits the rows in seq order; should a planner ever not, the rows are read
  // again through ORDER BY (read_range).
  // The range's end, checked here rather than by the statement (a key comparison per row in SQLite).
  if (row.seq >= collector.end_seq) {
    collector.batch.pop_back();
    collector.reached_end = true;
    sqlite3_result_error(context, "the end of the range", -1);
    return;
  }
  if (collector.any && row.seq <= collector.last_seq) {
    collector.out_of_order = true;
    sqlite3_result_error(context, "events out of seq order", -1);
    return;
  }
  collector.any = true;
  collector.last_seq = row.seq;
  if (collector.batch.size() < kEventBatchRows) return;
  collector.failed = (*collector.sink)(collector.batch);
  collector.batch.clear();
  collector.handed_on = true;
  if (!collector.failed) {
    sqlite3_result_error(context, "stopped by the reader", -1);
    return;
  }
  if (collector.stop && collector.stop->load(std::memory_order_relaxed)) {
    collector.stopped = true;
    sqlite3_result_error(context, "stopped by the reader", -1);
  }
}

void collect_done(sqlite3_context* context) {
  sqlite3_result_null(context);
}

// Rows of the trace with seq in [from, to), in seq order, a batch at a time, row by row through ORDER BY: the
// way back when the aggregate's scan was not in seq order.
Status read_range_ordered(sqlite3* db, const std::string& path, int64_t trace_id, int64_t from, int64_t to,
                          const EventColumns& columns, const EventBatchSink& sink,
                          const std::atomic<bool>* stop) {
  // The primary key (trace_id, seq) of the WITHOUT ROWID table is the scan's order: no sort.
  ETT_TRY_ASSIGN(
      Statement statement,
      prepare(db, path,
              columns.time_ns ? "SELECT seq, probe, code, tsc, lines, time_ns FROM events WHERE "
                                "trace_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq"
                              : "SELECT seq, probe, code, tsc, lines FROM events WHERE trace_id = ?1 "
                                "AND seq >= ?2 AND seq < ?3 ORDER BY seq"));
  sqlite3_stmt* raw = statement.get();
  sqlite3_bind_int64(raw, 1, trace_id);
  sqlite3_bind_int64(raw, 2, from);
  sqlite3_bind_int64(raw, 3, to);
  std::vector<EventRow> batch;
  batch.reserve(kEventBatchRows);
  for (;;) {
    const int step = sqlite3_step(raw);
    if (step == SQLITE_DONE) break;
    if (step != SQLITE_ROW) return sqlite_error(db, path, "reading events");
    EventRow& row = batch.emplace_back();
    row.seq = static_cast<uint64_t>(sqlite3_column_int64(raw, 0));
    row.probe = static_cast<uint8_t>(sqlite3_column_int(raw, 1));
    row.code = static_cast<uint8_t>(sqlite3_column_int(raw, 2));
    row.tsc = static_cast<uint64_t>(sqlite3_column_int64(raw, 3));
    row.lines = static_cast<uint8_t>(sqlite3_column_int(raw, 4));
    row.has_time_ns = columns.time_ns && sqlite3_column_type(raw, 5) != SQLITE_NULL;
    row.time_ns = row.has_time_ns ? sqlite3_column_int64(raw, 5) : 0;
    if (batch.size() == kEventBatchRows) {
      ETT_TRY(sink(batch));
      batch.clear();
      if (stop && stop->load(std::memory_order_relaxed)) return {};
    }
  }
  if (!batch.empty()) ETT_TRY(sink(batch));
  return {};
}

// Rows of the trace with seq in [from, to), in seq order, a batch at a time; stops early when `stop` is set.
// Rows out of seq order (a plan that does not follow the key) make the range be read again through ORDER BY
// after `restart`.
Status read_range(sqlite3* db, const std::string& path, int64_t trace_id, int64_t from, int64_t to,
                  const EventColumns& columns, const EventBatchSink& sink,
                  const std::function<Status()>& restart, const std::atomic<bool>* stop) {
  Collector collector;
  collector.sink = &sink;
  collector.stop = stop;
  collector.end_seq = static_cast<uint64_t>(to);
  collector.batch.reserve(kEventBatchRows);
  // Registered on this connection for this read (the collector is its user data); DIRECTONLY: no trigger or
  // view of the database file can call it.
  const int arguments = columns.time_ns ? 6 : 5;
  if (sqlite3_create_function_v2(db, "ett_read_events", arguments, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                 &collector, nullptr, collect_row, collect_done, nullptr) != SQLITE_OK)
    return sqlite_error(db, path, "reading events");
  struct Unregister {
    sqlite3* db;
    int arguments;
    ~Unregister() {
      sqlite3_create_function_v2(db, "ett_read_events", arguments, SQLITE_UTF8, nullptr, nullptr, nullptr,
                                 nullptr, nullptr);
    }
  } unregister{db, arguments};
  ETT_TRY_ASSIGN(
      Statement statement,
      prepare(db, path,
              columns.time_ns ? "SELECT ett_read_events(seq, probe, code, tsc, lines, time_ns) FROM "
                                "events WHERE trace_id = ?1 AND seq >= ?2"
                              : "SELECT ett_read_events(seq, probe, code, tsc, lines) FROM events "
                                "WHERE trace_id = ?1 AND seq >= ?2"));
  sqlite3_stmt* raw = statement.get();
  sqlite3_bind_int64(raw, 1, trace_id);
  sqlite3_bind_int64(raw, 2, from);
  const int step = sqlite3_step(raw);
  if (!collector.failed) return collector.failed;
  if (collector.stopped) return {};
  if (collector.reached_end) {
    if (!collector.batch.empty()) ETT_TRY(sink(collector.batch));
    return {};
  }
  if (collector.out_of_order) {
    // Found at the second row when it happens at all (a plan that does not follow the key).
    if (collector.handed_on) {
      if (Status restarted = restart(); !restarted)
        return make_error(ErrorKind::Io, fmt::format("{}: {}", path, restarted.error().message));
    }
    statement.reset();
    return read_range_ordered(db, path, trace_id, from, to, columns, sink, stop);
  }
  if (step != SQLITE_ROW) return sqlite_error(db, path, "reading events");
  if (!collector.batch.empty()) ETT_TRY(sink(collector.batch));
  return {};
}

// The trace's event_packs (packed_trace_sql): nullopt when it has none (a trace loaded before event_packs),
// so that it is read from events.
Expected<std::optional<PackedTrace>> packed_trace(sqlite3* db, const std::string& path, int64_t trace_id) {
  ETT_TRY_ASSIGN(Statement statement, prepare(db, path, packed_trace_sql(trace_id).c_str()));
  sqlite3_stmt* raw = statement.get();
  if (sqlite3_step(raw) != SQLITE_ROW) return sqlite_error(db, path, "reading event_packs").failure();
  if (sqlite3_column_type(raw, 0) == SQLITE_NULL) return std::optional<PackedTrace>();
  return std::optional(PackedTrace{sqlite3_column_int64(raw, 0), sqlite3_column_int64(raw, 1),
                                   static_cast<uint64_t>(sqlite3_column_int64(raw, 2))});
}

// The trace's events from its packs, in seq order, as one part: each pack's bytes are read where they lie in
// the page, and unpacking them costs a tenth of stepping through the rows of events.
Status read_packs(sqlite3* db, const std::string& path, int64_t trace_id, const PackedTrace& trace,
                  EventPartSink& sink) {
  auto damaged = [&path, trace_id](const std::string& what) {
    return make_error(ErrorKind::Io,
                      fmt::format("{}: event_packs of trace {}: {}; after DELETE FROM event_packs WHERE "
                                  "trace_id = {} the trace is read from events, and `ett load` of its image "
                                  "writes its packs again",
                                  path, trace_id, what, trace_id));
  };
  const SeqRange part{trace.first_seq, trace.last_seq};
  ETT_TRY(sink.begin(std::span(&part, 1)));
  PackedTraceReader reader([&sink](std::span<const EventRow> rows) { return sink.take(0, rows); }, damaged);
  ETT_TRY_ASSIGN(
      Statement statement,
      prepare(db, path,
              "SELECT first_seq, last_seq, events, data FROM event_packs WHERE trace_id = ?1 ORDER "
              "BY first_seq"));
  sqlite3_stmt* raw = statement.get();
  sqlite3_bind_int64(raw, 1, trace_id);
  int step;
  while ((step = sqlite3_step(raw)) == SQLITE_ROW) {
    if (sqlite3_column_type(raw, 3) != SQLITE_BLOB) return damaged("a pack whose data is not a blob");
    const auto* data = static_cast<const char*>(sqlite3_column_blob(raw, 3));
    const std::string_view packed(data, static_cast<size_t>(sqlite3_column_bytes(raw, 3)));
    ETT_TRY(reader.add(sqlite3_column_int64(raw, 0), sqlite3_column_int64(raw, 1),
                       sqlite3_column_int64(raw, 2), packed));
  }
  if (step != SQLITE_DONE) return sqlite_error(db, path, "reading event_packs");
  return reader.finish(trace.events);
}

}  // namespace

Status read_sqlite_events(sqlite3* db, const std::string& path, int64_t trace_id, const EventColumns& columns,
                          EventPartSink& sink) {
  // Without time_ns (a column the packs leave out: the reader computes times from the TSC), from the packs.
  if (!columns.time_ns) {
    ETT_TRY_ASSIGN(std::optional<PackedTrace> packed, packed_trace(db, path, trace_id));
    if (packed) return read_packs(db, path, trace_id, *packed, sink);
  }
  ETT_TRY_ASSIGN(std::optional<int64_t> first, end_seq(db, path, trace_id, false));
  if (!first) return sink.begin({});
  ETT_TRY_ASSIGN(std::optional<int64_t> last, end_seq(db, path, trace_id, true));
  // A big trace: the upper half of the seq range is read on a second, read-only connection by a second
  // thread while this one reads the lower half. The cost of a read is SQLite's per-row work, so two cores
  // take about half the wall time. Loads only add traces, so both connections see the same rows of this one.
  std::unique_ptr<sqlite3, SqliteCloser> second;
  // (Only a database file can be opened twice: not an in-memory or temporary one.)
  const bool file = !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
  if (file && *last - *first >= kSplitEvents) {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) == SQLITE_OK)
      sqlite3_busy_timeout(raw, 10'000);
    second.reset(raw);
    if (raw && sqlite3_errcode(raw) != SQLITE_OK) second.reset();
  }
  const std::vector<SeqRange> parts = split_range(*first, *last, second ? 2 : 1);
  return read_parts(
      parts,
      [&](size_t part, const EventBatchSink& rows, const std::function<Status()>& restart,
          const std::atomic<bool>* stop) {
        return read_range(part == 0 ? db : second.get(), path, trace_id, parts[part].first,
                          parts[part].last + 1, columns, rows, restart, stop);
      },
      sink);
}

}  // namespace ett::host
