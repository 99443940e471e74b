// database.h: the trace database behind `ett load/query/sql/label`: one interface, two engines
// (SQLite embedded, PostgreSQL server), chosen by a URL.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "db/event_reader.h"
#include "db/tallies.h"
#include "image/event_source.h"
#include "image/trace_image.h"

namespace ett::host {

inline constexpr const char* kDefaultDbUrl = "sqlite:traces.db";
// $ETT_DB when set, else kDefaultDbUrl: what --db defaults to.
std::string default_db_url();

enum class DbEngine { Sqlite, Postgres };

// "sqlite:PATH" or "postgresql://..." / "postgres://..." (libpq's URI syntax, passed through).
struct DbUrl {
  DbEngine engine = DbEngine::Sqlite;
  std::string target;  // the SQLite file path, or the libpq connection URI
};
Expected<DbUrl> parse_db_url(const std::string& url);

// A query result as text, as both engines print it; nullopt is SQL NULL.
using DbValue = std::optional<std::string>;
struct ResultTable {
  std::vector<std::string> columns;
  std::vector<std::vector<DbValue>> rows;
};

// A query's result handed over as it is read: its column names, then its rows a batch at a time, so that a
// result of millions of rows is never held whole. An error from either stops the query and is returned.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual Status columns(std::span<const std::string> names) = 0;
  virtual Status rows(std::span<const std::vector<DbValue>> batch) = 0;
};

// A RowSink that keeps the whole result.
class CollectRows final : public RowSink {
 public:
  Status columns(std::span<const std::string> names) override {
    table.columns.assign(names.begin(), names.end());
    return {};
  }
  Status rows(std::span<const std::vector<DbValue>> batch) override {
    table.rows.insert(table.rows.end(), batch.begin(), batch.end());
    return {};
  }
  ResultTable table;
};

// A value bound to a parameter or stored in a traces column.
using SqlValue = std::variant<std::monostate, int64_t, std::string>;

// One row of `traces` (without trace_id, which the database assigns), in db_schema's column order.
struct TraceRow {
  std::string disk_uuid;
  uint32_t session = 0;
  std::string content_hash;
  std::vector<SqlValue> values;  // every column of kTraceColumns
  int probe_count = 0;
  format::SessionHeader header{};  // what content_hash covers besides the events
  // The session's stall table, for table `stalls`: start and length in ticks and in ns (NULL without a TSC
  // rate).
  struct Stall {
    int64_t start_tsc = 0;
    int64_t length_ticks = 0;
    SqlValue start_ns;
    SqlValue length_ns;
  };
  std::vector<Stall> stalls;
  // The hash above and the rows of event_codes and event_blocks, from the events.
  EventTallies tallies;
};

// Called as a load goes on; returning false abandons the load (nothing of it stays in the database).
using LoadProgress = std::function<bool(uint64_t done, uint64_t total)>;

struct LoadOutcome {
  int64_t trace_id = 0;
  bool already_loaded = false;  // the same disk, session and contents were there
  // When already loaded but its events rows were not all there as loaded (deleted, changed, the table
  // dropped, or flags/aux missing from an older ett): what was wrong. Its events were loaded again.
  std::string repaired;
};

// A row of `events` as stored: flags and aux are nullopt where an older ett loaded the trace.
struct StoredEvent {
  Event event;
  bool complete = true;  // flags and aux were there
};
using StoredEventSink = std::function<void(const StoredEvent&)>;

class Database {
 public:
  virtual ~Database() = default;
  virtual DbEngine engine() const = 0;

  // Creates the tables and indexes that are missing and migrates an older schema (apply_schema).
  virtual Status ensure_schema() = 0;

  // Runs one statement with $1, $2, ... parameters (text, or integers) and returns every row as text.
  virtual Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) = 0;
  // The same, its rows handed to `sink` a batch at a time as they are read (a query, not a command).
  virtual Status query_rows(const std::string& sql, std::span<const SqlValue> params, RowSink& sink) = 0;
  // Runs ad-hoc SQL (possibly several statements); returns the last statement's rows.
  virtual Expected<ResultTable> run_script(const std::string& sql) = 0;
  // The same for `ett sql`, the rows handed to `sink` (not called when no statement returns rows): SQLite,
  // those of the last statement that returns rows, streamed when it is the script's last; PostgreSQL, those
  // of the script's last statement, streamed when the script is one statement.
  virtual Status run_script_rows(const std::string& sql, RowSink& sink) = 0;

  // Reads the events of one trace typed, as parts at once, each part in seq order (db/event_reader.h).
  virtual Status read_event_parts(int64_t trace_id, const EventColumns& columns, EventPartSink& sink) = 0;
  // Streams the events of one trace in seq order, typed, in batches (the parts after each other); `restart`
  // as read_in_order's.
  Status read_events(int64_t trace_id, const EventBatchSink& sink, const EventColumns& columns = {},
                     const StreamRestart& restart = {}) {
    return read_in_order([&](EventPartSink& parts) { return read_event_parts(trace_id, columns, parts); },
                         sink, restart);
  }

  // In one transaction: unless (disk_uuid, session, content_hash) is already there, inserts the trace row,
  // its events, its event_codes rows and one probes row per probe. Either all of it is committed or none of
  // it. When the trace is there, checks that its events rows are (count and content hash) and loads them
  // again if not (LoadOutcome::repaired). Shared by both engines (database.cpp).
  // `events` are read once, or (repaired) twice, through their feeds (image/event_source.h).
  Expected<LoadOutcome> load_trace(const TraceRow& trace, const EventSource& events,
                                   uint64_t capture_start_tsc, uint64_t tsc_hz, const LoadProgress& progress);
  Expected<LoadOutcome> load_trace(const TraceRow& trace, std::span<const Event> events,
                                   uint64_t capture_start_tsc, uint64_t tsc_hz,
                                   const LoadProgress& progress) {
    return load_trace(trace, EventSpan(events), capture_start_tsc, tsc_hz, progress);
  }

  // A new trace's events handed to the load a block at a time (a session decoded as it is inserted, in
  // constant memory), in seq order (EventFeed); an empty span ends them. An error abandons the load.
  // The traces row of the events fed, once they have all been (their content hash and tallies).
  using FedTraceRow = std::function<Expected<TraceRow>()>;
  // The same in one transaction for a session of `expected_events` (`header`'s disk and session) whose events
  // come from `feed`: the events rows first, then the traces row from `finish`, then the rest. Only where the
  // engine takes a feed (SQLite) and the database holds no trace of that disk and session: otherwise nothing
  // is done and nullopt returned, and the session is for load_trace (whose already-loaded check needs the
  // content hash first). An error from `feed` or `finish` rolls the load back and is returned.
  Expected<std::optional<LoadOutcome>> load_fed_trace(const format::SessionHeader& header,
                                                      uint64_t expected_events, const EventFeed& feed,
                                                      const FedTraceRow& finish,
                                                      const LoadProgress& progress);

 protected:
  // The engine's part of a load. begin_load starts its transaction (and takes what lock it needs);
  // end_load commits it (or rolls it back when `commit` is false, which cannot fail).
  virtual Status begin_load() = 0;
  virtual Status end_load(bool commit) = 0;
  // Bulk-inserts `events` as rows of trace_id; progress may abandon it (an Interrupted error).
  virtual Status insert_events(int64_t trace_id, const EventSource& events, uint64_t capture_start_tsc,
                               uint64_t tsc_hz, const LoadProgress& progress) = 0;
  // Streams the events rows of trace_id in seq order.
  virtual Status scan_events(int64_t trace_id, const StoredEventSink& sink) = 0;

  // An engine that takes a load's events from a feed (load_fed_trace) says so, gives the id of the next
  // trace (inside the load's transaction) and inserts the rows as insert_events does.
  virtual bool takes_event_feed() const { return false; }
  virtual Expected<int64_t> next_trace_id();
  virtual Status insert_event_feed(int64_t trace_id, const EventFeed& feed, uint64_t expected_events,
                                   uint64_t capture_start_tsc, uint64_t tsc_hz, const LoadProgress& progress);

 private:
  // Everything of a trace after its traces row and events rows: probes (those missing), event_codes,
  // event_blocks, stalls.
  Status insert_trace_contents(int64_t trace_id, const TraceRow& trace, uint64_t tsc_hz);
  // Runs `body` inside begin_load/end_load: committed when it returns a value, rolled back when it returns
  // nullopt or an error.
  using LoadBody = std::function<Expected<std::optional<LoadOutcome>>()>;
  Expected<std::optional<LoadOutcome>> in_load(const LoadBody& body);
  // Why trace_id's events rows are not the `expected` events that hash to trace.content_hash, or its
  // event_packs do not hold them all (a trace loaded before event_packs); "" when they are and do.
  Expected<std::string> check_events(int64_t trace_id, const TraceRow& trace, uint64_t expected);
};

Expected<std::unique_ptr<Database>> open_database(const std::string& url);

// The most recently loaded trace (the highest trace_id); an error when there is none.
Expected<int64_t> latest_trace(Database& db);

}  // namespace ett::host
