// sqlite.cpp: SQLite engine: RAII handles, $N parameters, the bulk load (one transaction, one prepared
// INSERT, load-time pragmas).
#include "db/sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>
#include <span>

#include "db/event_packs.h"
#include "db/schema.h"
#include "image/event_writer.h"

namespace ett::host {

namespace {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using SqliteHandle = std::unique_ptr<sqlite3, SqliteCloser>;
using SqliteStatement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// What the virtual table `ett_load_events` shows: events[begin, end) of the load in progress as rows of
// `events`. Empty outside a load.
struct LoadSource {
  std::span<const Event> events;
  size_t begin = 0;
  size_t end = 0;
  int64_t trace_id = 0;
  EventTiming timing;
};

// tsc_to_ns, with the same rounding, in 64-bit arithmetic: in one division while ticks * 1e9 + hz / 2 fits
// (up to 1.8e10 ticks from the capture start, seconds of capture, for any rate up to 1 THz); beyond, split at
// whole seconds (ticks = q * hz + r, so the quotient is q * 1e9 + (r * 1e9 + hz / 2) / hz), while r * 1e9 +
// hz / 2 fits (rates up to 2^34 Hz, 17 GHz) and q * 1e9 does; a 128-bit division otherwise.
int64_t load_time_ns(uint64_t tsc, const EventTiming& timing) {
  const auto ticks = static_cast<int64_t>(tsc - timing.capture_start_tsc);
  const uint64_t magnitude = ticks < 0 ? 0 - static_cast<uint64_t>(ticks) : static_cast<uint64_t>(ticks);
  const uint64_t hz = timing.hz;
  constexpr uint64_t kMaxHz = uint64_t{1} << 40;
  constexpr uint64_t kMaxTicks = (UINT64_MAX - kMaxHz / 2) / 1'000'000'000;
  constexpr uint64_t kMaxSplitHz = uint64_t{1} << 34;
  constexpr uint64_t kMaxSeconds = 9'000'000'000;  // q * 1e9 + 1e9 < 2^63
  uint64_t ns;
  if (magnitude <= kMaxTicks && hz <= kMaxHz)
    ns = (magnitude * 1'000'000'000 + hz / 2) / hz;
  else if (hz <= kMaxSplitHz && magnitude / hz <= kMaxSeconds)
    ns = magnitude / hz * 1'000'000'000 + (magnitude % hz * 1'000'000'000 + hz / 2) / hz;
  else
    return tsc_to_ns(tsc, timing);
  return ticks < 0 ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns);
}

// An eponymous, read-only virtual table over the LoadSource given to sqlite3_create_module as its client
// data: the bulk path's INSERT ... SELECT reads the decoded events straight from memory.
namespace load_table {

struct Cursor {
  sqlite3_vtab_cursor base{};
  size_t row = 0;
};

struct Table {
  sqlite3_vtab base{};
  const LoadSource* source = nullptr;
};

enum Column { TraceId, Seq, Probe, Code, Tsc, TimeNs, Lines, Flags, Aux };

int connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
  const int declared =
      sqlite3_declare_vtab(db, "CREATE TABLE x(trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux)");
  if (declared != SQLITE_OK) return declared;
  // Only a statement of ours may read it: not a trigger or a view of a database someone else wrote.
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  auto* table = new (std::nothrow) Table;
  if (!table) return SQLITE_NOMEM;
  table->source = static_cast<const LoadSource*>(aux);
  *out = &table->base;
  return SQLITE_OK;
}

int disconnect(sqlite3_vtab* table) {
  delete reinterpret_cast<Table*>(table);
  return SQLITE_OK;
}

int best_index(sqlite3_vtab* table, sqlite3_index_info* info) {
  const LoadSource& source = *reinterpret_cast<Table*>(table)->source;
  info->estimatedRows = static_cast<sqlite3_int64>(source.end - source.begin);
  info->estimatedCost = static_cast<double>(info->estimatedRows);
  return SQLITE_OK;
}

int open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* cursor = new (std::nothrow) Cursor;
  if (!cursor) return SQLITE_NOMEM;
  *out = &cursor->base;
  return SQLITE_OK;
}

int close(sqlite3_vtab_cursor* cursor) {
  delete reinterpret_cast<Cursor*>(cursor);
  return SQLITE_OK;
}

const LoadSource& source_of(sqlite3_vtab_cursor* cursor) {
  return *reinterpret_cast<Table*>(cursor->pVtab)->source;
}

int filter(sqlite3_vtab_cursor* cursor, int, const char*, int, sqlite3_value**) {
  reinterpret_cast<Cursor*>(cursor)->row = source_of(cursor).begin;
  return SQLITE_OK;
}

int next(sqlite3_vtab_cursor* cursor) {
  ++reinterpret_cast<Cursor*>(cursor)->row;
  return SQLITE_OK;
}

int eof(sqlite3_vtab_cursor* cursor) {
  return reinterpret_cast<Cursor*>(cursor)->row >= source_of(cursor).end;
}

int column(sqlite3_vtab_cursor* cursor, sqlite3_context* context, int index) {
  const LoadSource& source = source_of(cursor);
  const Event& event = source.events[reinterpret_cast<Cursor*>(cursor)->row];
  switch (index) {
    case TraceId:
      sqlite3_result_int64(context, source.trace_id);
      break;
    case Seq:
      sqlite3_result_int64(context, static_cast<sqlite3_int64>(event.seq));
      break;
    case Probe:
      sqlite3_result_int(context, event.probe);
      break;
    case Code:
      sqlite3_result_int(context, event.code);
      break;
    case Tsc:
      sqlite3_result_int64(context, static_cast<sqlite3_int64>(event.tsc));
      break;
    case TimeNs:
      if (source.timing.hz)
        sqlite3_result_int64(context, load_time_ns(event.tsc, source.timing));
      else
        sqlite3_result_null(context);
      break;
    case Lines:
      sqlite3_result_int(context, event.lines);
      break;
    case Flags:
      sqlite3_result_int(context, event.flags);
      break;
    default:
      sqlite3_result_int64(context, event.aux);
      break;
  }
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* cursor, sqlite3_int64* out) {
  *out = static_cast<sqlite3_int64>(reinterpret_cast<Cursor*>(cursor)->row);
  return SQLITE_OK;
}

// xCreate null and xConnect set: eponymous-only, usable by name without CREATE VIRTUAL TABLE.
const sqlite3_module kModule = {.iVersion = 0,
                                .xCreate = nullptr,
                                .xConnect = connect,
                                .xBestIndex = best_index,
                                .xDisconnect = disconnect,
                                .xDestroy = nullptr,
                                .xOpen = open,
                                .xClose = close,
                                .xFilter = filter,
                                .xNext = next,
                                .xEof = eof,
                                .xColumn = column,
                                .xRowid = rowid};

}  // namespace load_table

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(SqliteHandle db, std::string path) : m_db(std::move(db)), m_path(std::move(path)) {}

  DbEngine engine() const override { return DbEngine::Sqlite; }
  sqlite3* handle() const { return m_db.get(); }

  Status ensure_schema() override {
    // Big pages suit long sequential event tables; only a new, empty database takes the setting.
    ETT_TRY(exec("PRAGMA page_size = 65536"));
    ETT_TRY(apply_schema(*this));
    // A table of that name would hide the bulk-load virtual table, and the load would read it instead.
    ETT_TRY_ASSIGN(ResultTable own,
                   query("SELECT name FROM sqlite_schema WHERE name = 'ett_load_events'", {}));
    if (!own.rows.empty())
      return make_error(ErrorKind::Usage, m_path +
                                              ": the database has its own 'ett_load_events', a name that ett "
                                              "reserves for its bulk load: rename it");
    return {};
  }

  Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) override {
    ETT_TRY_ASSIGN(SqliteStatement statement, prepare(sql));
    ETT_TRY(bind_params(statement.get(), params));
    return fetch(statement.get());
  }

  Status query_rows(const std::string& sql, std::span<const SqlValue> params, RowSink& sink) override {
    ETT_TRY_ASSIGN(SqliteStatement statement, prepare(sql));
    ETT_TRY(bind_params(statement.get(), params));
    return each_row(statement.get(), sink);
  }

  Expected<ResultTable> run_script(const std::string& sql) override {
    CollectRows collected;
    ETT_TRY(run_script_rows(sql, collected));
    return std::move(collected.table);
  }

  // A statement with rows that ends the script streams them; one that a later statement may still supersede
  // is kept whole.
  Status run_script_rows(const std::string& sql, RowSink& sink) override {
    CollectRows last;
    const char* rest = sql.c_str();
    while (*rest) {
      sqlite3_stmt* raw = nullptr;
      const char* tail = nullptr;
      if (sqlite3_prepare_v2(m_db.get(), rest, -1, &raw, &tail) != SQLITE_OK) return error("SQL error");
      SqliteStatement statement(raw);
      rest = tail;
      if (!statement) continue;  // whitespace or a comment
      if (sqlite3_bind_parameter_count(raw) > 0)
        return make_error(ErrorKind::Usage, "ett sql takes no parameters; use literal values");
      if (sqlite3_column_count(raw) > 0 && no_statement_in(rest)) return each_row(raw, sink);
      CollectRows rows;
      ETT_TRY(each_row(raw, rows));
      if (!rows.table.columns.empty() || last.table.columns.empty()) last = std::move(rows);
    }
    if (last.table.columns.empty()) return {};
    ETT_TRY(sink.columns(last.table.columns));
    return sink.rows(last.table.rows);
  }

  Status read_event_parts(int64_t trace_id, const EventColumns& columns, EventPartSink& sink) override {
    return read_sqlite_events(m_db.get(), m_path, trace_id, columns, sink);
  }

  Status begin_load() override {
    // Load-time pragmas: a 16 MB page cache and temporary storage in memory. An append touches only the
    // right edge of each b-tree, and the pages it fills go to the file's page cache either way: a 256 MB
    // cache held them a second time in fresh memory, 250 MB more of peak and about a tenth more wall time for
    // a 10 M-event load (docs/design/database.md). The rollback journal stays on (journal_mode DELETE):
    // appending to a table journals almost nothing, and it is what makes an interrupted load leave no trace
    // behind.
    ETT_TRY(exec("PRAGMA cache_size = -16384"));
    ETT_TRY(exec("PRAGMA temp_store = MEMORY"));
    ETT_TRY(exec("PRAGMA synchronous = NORMAL"));
    // Debian builds SQLite with SECURE_DELETE on: every b-tree rebalance then zeroes the space it frees (8 %
    // of a load). A load only appends, so the freed space never held anything the database does not still
    // hold; the connection's setting comes back when the load ends (end_load), for whatever deletes on it
    // later.
    m_secure_delete = secure_delete_setting();
    ETT_TRY(exec("PRAGMA secure_delete = OFF"));
    if (Status begun = exec("BEGIN IMMEDIATE"); !begun) {
      restore_secure_delete();
      return begun;
    }
    return {};
  }

  Status end_load(bool commit) override {
    Status done = commit ? exec("COMMIT") : Status{};
    if (!commit || !done) sqlite3_exec(m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    restore_secure_delete();
    return done;
  }

  // The events a block of their feed at a time: the progress callback runs between statement steps.
  Status insert_events(int64_t trace_id, const EventSource& events, uint64_t start_tsc, uint64_t tsc_hz,
                       const LoadProgress& progress) override {
    return insert_event_feed(trace_id, events.feed(0, events.size()), events.size(), start_tsc, tsc_hz,
                             progress);
  }

  bool takes_event_feed() const override { return true; }

  // The id SQLite gives a new row's INTEGER PRIMARY KEY: one above the highest.
  Expected<int64_t> next_trace_id() override {
    ETT_TRY_ASSIGN(ResultTable top, query("SELECT coalesce(max(trace_id), 0) + 1 FROM traces", {}));
    if (top.rows.empty() || !top.rows[0][0]) return make_error(ErrorKind::Io, m_path + ": no next trace_id");
    return static_cast<int64_t>(std::stoll(*top.rows[0][0]));
  }

  Status insert_event_feed(int64_t trace_id, const EventFeed& feed, uint64_t expected_events,
                           uint64_t start_tsc, uint64_t tsc_hz, const LoadProgress& progress) override {
    // INSERT ... SELECT from the virtual table over each block of the feed, one statement step per block: the
    // rows go from the decoded events into the b-tree inside one statement (no bind/step/reset per row), and
    // the progress callback runs between blocks. The trace_id is a parameter, which SQLite reads once per
    // statement step, not a column of the virtual table read for every row.
    ETT_TRY_ASSIGN(SqliteStatement insert,
                   prepare("INSERT INTO events (trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux) "
                           "SELECT ?1, seq, probe, code, tsc, time_ns, lines, flags, aux "
                           "FROM ett_load_events"));
    sqlite3_bind_int64(insert.get(), 1, trace_id);
    // The events packed as event_packs holds them (db/event_packs.h), each pack inserted once it closes (a
    // reload's old ones deleted first): the load holds one pack at a time.
    const SqlValue id[] = {trace_id};
    ETT_TRY(query("DELETE FROM event_packs WHERE trace_id = $1", id));
    ETT_TRY_ASSIGN(
        SqliteStatement insert_pack,
        prepare("INSERT INTO event_packs (trace_id, first_seq, last_seq, events, data) VALUES (?1, "
                "?2, ?3, ?4, ?5)"));
    sqlite3_bind_int64(insert_pack.get(), 1, trace_id);
    EventPacker packer;
    auto insert_packs = [&]() -> Status {
      for (const EventPack& pack : packer.take()) {
        sqlite3_stmt* raw = insert_pack.get();
        sqlite3_bind_int64(raw, 2, static_cast<int64_t>(pack.first_seq));
        sqlite3_bind_int64(raw, 3, static_cast<int64_t>(pack.last_seq));
        sqlite3_bind_int64(raw, 4, pack.events);
        sqlite3_bind_blob(raw, 5, pack.data.data(), static_cast<int>(pack.data.size()), SQLITE_STATIC);
        const int step = sqlite3_step(raw);
        sqlite3_reset(raw);
        if (step != SQLITE_DONE)
          return error(fmt::format("inserting the pack of seqs {}..{}", pack.first_seq, pack.last_seq));
      }
      return {};
    };
    struct Clear {
      LoadSource& source;
      ~Clear() { source = {}; }
    } clear{m_source};
    uint64_t done = 0;
    for (;;) {
      ETT_TRY_ASSIGN(std::span<const Event> block, feed());
      if (block.empty()) {
        packer.finish();
        return insert_packs();
      }
      m_source = LoadSource{block, 0, block.size(), trace_id, EventTiming{start_tsc, tsc_hz}};
      const int step = sqlite3_step(insert.get());
      sqlite3_reset(insert.get());
      if (step != SQLITE_DONE)
        return error(fmt::format("inserting events {}..{}", block.front().seq, block.back().seq));
      for (const Event& event : block) packer.add(event);
      ETT_TRY(insert_packs());
      done += block.size();
      if (progress && done < expected_events && !progress(done, expected_events))
        return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
    }
  }

  Status scan_events(int64_t trace_id, const StoredEventSink& sink) override {
    ETT_TRY_ASSIGN(SqliteStatement scan,
                   prepare("SELECT seq, tsc, probe, code, lines, flags, aux FROM events WHERE trace_id = ?1 "
                           "ORDER BY seq"));
    sqlite3_bind_int64(scan.get(), 1, trace_id);
    sqlite3_stmt* row = scan.get();
    int step;
    while ((step = sqlite3_step(row)) == SQLITE_ROW) {
      StoredEvent stored;
      Event& event = stored.event;
      event.seq = static_cast<uint64_t>(sqlite3_column_int64(row, 0));
      event.tsc = static_cast<uint64_t>(sqlite3_column_int64(row, 1));
      event.probe = static_cast<uint8_t>(sqlite3_column_int(row, 2));
      event.code = static_cast<uint8_t>(sqlite3_column_int(row, 3));
      event.lines = static_cast<uint8_t>(sqlite3_column_int(row, 4));
      stored.complete =
          sqlite3_column_type(row, 5) != SQLITE_NULL && sqlite3_column_type(row, 6) != SQLITE_NULL;
      event.flags = static_cast<uint8_t>(sqlite3_column_int(row, 5));
      event.aux = static_cast<uint32_t>(sqlite3_column_int64(row, 6));
      sink(stored);
    }
    if (step != SQLITE_DONE) return error("reading events");
    return {};
  }

 private:
  // The connection's PRAGMA secure_delete (0 or 1; 1, the safe side, when it cannot be read).
  int secure_delete_setting() {
    auto read = prepare("PRAGMA secure_delete");
    return read && sqlite3_step(read->get()) == SQLITE_ROW ? sqlite3_column_int(read->get(), 0) : 1;
  }

  void restore_secure_delete() {
    sqlite3_exec(m_db.get(), fmt::format("PRAGMA secure_delete = {}", m_secure_delete).c_str(), nullptr,
                 nullptr, nullptr);
  }

  ett::Failure<HostError> error(const std::string& what) const {
    return make_error(ErrorKind::Io, fmt::format("{}: {}: {}", m_path, what, sqlite3_errmsg(m_db.get())));
  }

  Status exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(m_db.get(), sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      std::string text = message ? message : "unknown error";
      sqlite3_free(message);
      return make_error(ErrorKind::Io, fmt::format("{}: {}", m_path, text));
    }
    return {};
  }

  Expected<SqliteStatement> prepare(const std::string& sql) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(m_db.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK)
      return error("SQL error");
    return SqliteStatement(raw);
  }

  // $N parameters are named in SQLite: each name says which value it takes.
  Status bind_params(sqlite3_stmt* statement, std::span<const SqlValue> params) {
    const int count = sqlite3_bind_parameter_count(statement);
    for (int i = 1; i <= count; ++i) {
      const char* name = sqlite3_bind_parameter_name(statement, i);
      size_t number = 0;
      if (!name || name[0] != '$' ||
          std::from_chars(name + 1, name + std::strlen(name), number).ec != std::errc{} || number == 0)
        return make_error(ErrorKind::Usage, "parameters must be written $1, $2, ...");
      if (number > params.size())
        return make_error(ErrorKind::Usage,
                          fmt::format("the query uses ${} but {} values were given", number, params.size()));
      const SqlValue& value = params[number - 1];
      if (const auto* n = std::get_if<int64_t>(&value))
        sqlite3_bind_int64(statement, i, *n);
      else if (const auto* s = std::get_if<std::string>(&value))
        sqlite3_bind_text(statement, i, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      else
        sqlite3_bind_null(statement, i);
    }
    return {};
  }

  // The statement's rows as text, a batch of kRowBatch at a time (the vectors reused from batch to batch).
  Status each_row(sqlite3_stmt* statement, RowSink& sink) {
    constexpr size_t kRowBatch = 4096;
    const int columns = sqlite3_column_count(statement);
    std::vector<std::string> names;
    for (int c = 0; c < columns; ++c) names.emplace_back(sqlite3_column_name(statement, c));
    ETT_TRY(sink.columns(names));
    std::vector<std::vector<DbValue>> batch;  // grows to kRowBatch rows, then reused
    size_t filled = 0;
    for (;;) {
      const int step = sqlite3_step(statement);
      if (step == SQLITE_DONE) break;
      if (step != SQLITE_ROW) return error("SQL error");
      if (filled == batch.size()) batch.emplace_back(static_cast<size_t>(columns));
      std::vector<DbValue>& row = batch[filled++];
      for (int c = 0; c < columns; ++c) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, c));
        if (!text)
          row[c].reset();
        else if (row[c])
          row[c]->assign(text);  // the string of the batch before reused; up to a NUL inside, as C text
        else
          row[c].emplace(text);
      }
      if (filled == kRowBatch) {
        ETT_TRY(sink.rows(batch));
        filled = 0;
      }
    }
    if (filled) ETT_TRY(sink.rows(std::span(batch).first(filled)));
    return {};
  }

  // Whether `sql` holds nothing but whitespace, comments and empty statements (as SQLite parses it; a
  // statement that cannot be prepared yet, say on a table an earlier one creates, counts as one).
  bool no_statement_in(const char* sql) {
    while (*sql) {
      sqlite3_stmt* raw = nullptr;
      const char* tail = nullptr;
      const int prepared = sqlite3_prepare_v2(m_db.get(), sql, -1, &raw, &tail);
      SqliteStatement statement(raw);
      if (prepared != SQLITE_OK || statement) return false;
      sql = tail;
    }
    return true;
  }

  Expected<ResultTable> fetch(sqlite3_stmt* statement) {
    CollectRows collected;
    ETT_TRY(each_row(statement, collected));
    return std::move(collected.table);
  }

  SqliteHandle m_db;
  std::string m_path;
  int m_secure_delete = 1;  // the connection's setting outside a load

 public:
  LoadSource m_source;  // read by the ett_load_events virtual table (its client data)
};

}  // namespace

Expected<std::unique_ptr<Database>> open_sqlite_database(const std::string& path) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(
      path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteHandle db(raw);
  if (opened != SQLITE_OK)
    return make_error(ErrorKind::Io, fmt::format("{}: cannot open the database: {}", path,
                                                 raw ? sqlite3_errmsg(raw) : "out of memory"));
  sqlite3_busy_timeout(db.get(), 10'000);
  auto database = std::make_unique<SqliteDatabase>(std::move(db), path);
  if (sqlite3_create_module(database->handle(), "ett_load_events", &load_table::kModule,
                            &database->m_source) != SQLITE_OK)
    return make_error(ErrorKind::Io, fmt::format("{}: cannot register the bulk-load table: {}", path,
                                                 sqlite3_errmsg(database->handle())));
  return std::unique_ptr<Database>(std::move(database));
}

}  // namespace ett::host
