// db_sqlite.cpp: SQLite engine: RAII handles, $N parameters, the bulk load (one transaction, one prepared
// INSERT, load-time pragmas).
#include "db_sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <charconv>
#include <cstring>

#include "db_schema.h"
#include "event_writer.h"

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

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(SqliteHandle db, std::string path) : m_db(std::move(db)), m_path(std::move(path)) {}

  DbEngine engine() const override { return DbEngine::Sqlite; }

  Status ensure_schema() override {
    // Big pages suit long sequential event tables; only a new, empty database takes the setting.
    ETT_TRY(exec("PRAGMA page_size = 65536"));
    for (const std::string& statement : schema_statements(DbEngine::Sqlite)) ETT_TRY(exec(statement));
    return {};
  }

  Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) override {
    ETT_TRY_ASSIGN(SqliteStatement statement, prepare(sql));
    ETT_TRY(bind_params(statement.get(), params));
    return fetch(statement.get());
  }

  Expected<ResultTable> run_script(const std::string& sql) override {
    ResultTable last;
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
      ETT_TRY_ASSIGN(ResultTable table, fetch(raw));
      if (!table.columns.empty() || last.columns.empty()) last = std::move(table);
    }
    return last;
  }

  Expected<LoadOutcome> load_trace(const TraceRow& trace, std::span<const Event> events, uint64_t start_tsc,
                                   uint64_t tsc_hz, const LoadProgress& progress) override {
    // Load-time pragmas: a big page cache and temporary storage in memory. The rollback journal stays on
    // (journal_mode DELETE): appending to a table journals almost nothing, and it is what makes an
    // interrupted load leave no trace behind.
    ETT_TRY(exec("PRAGMA cache_size = -262144"));
    ETT_TRY(exec("PRAGMA temp_store = MEMORY"));
    ETT_TRY(exec("PRAGMA synchronous = NORMAL"));
    ETT_TRY(exec("BEGIN IMMEDIATE"));
    Transaction transaction(*this);

    const SqlValue identity[] = {trace.disk_uuid, int64_t{trace.session}, trace.content_hash};
    ETT_TRY_ASSIGN(ResultTable found,
                   query("SELECT trace_id FROM traces WHERE disk_uuid = $1 AND session = $2 AND content_hash = $3",
                         identity));
    if (!found.rows.empty() && found.rows[0][0])
      return LoadOutcome{std::stoll(*found.rows[0][0]), true};

    ETT_TRY_ASSIGN(ResultTable inserted, query(insert_trace_sql(), trace.values));
    if (inserted.rows.empty() || !inserted.rows[0][0]) return error("INSERT INTO traces returned no trace_id");
    const int64_t trace_id = std::stoll(*inserted.rows[0][0]);

    // One prepared statement inserts kBatchRows events (few statement executions: the per-step overhead
    // dominates single-row inserts); a single-row statement takes the remainder.
    constexpr size_t kBatchRows = 128;
    std::string values;
    for (size_t r = 0; r < kBatchRows; ++r) values += r ? ",(?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?)";
    const std::string insert_sql = "INSERT INTO events (trace_id, seq, probe, code, tsc, time_ns, lines) VALUES ";
    ETT_TRY_ASSIGN(SqliteStatement batch, prepare(insert_sql + values));
    ETT_TRY_ASSIGN(SqliteStatement single, prepare(insert_sql + "(?,?,?,?,?,?,?)"));
    const EventTiming timing{start_tsc, tsc_hz};
    auto bind_event = [&](sqlite3_stmt* statement, int first, const Event& event) {
      sqlite3_bind_int64(statement, first, trace_id);
      sqlite3_bind_int64(statement, first + 1, static_cast<int64_t>(event.seq));
      sqlite3_bind_int(statement, first + 2, event.probe);
      sqlite3_bind_int(statement, first + 3, event.code);
      sqlite3_bind_int64(statement, first + 4, static_cast<int64_t>(event.tsc));
      if (tsc_hz) sqlite3_bind_int64(statement, first + 5, tsc_to_ns(event.tsc, timing));
      else sqlite3_bind_null(statement, first + 5);
      sqlite3_bind_int(statement, first + 6, event.lines);
    };
    auto run = [&](sqlite3_stmt* statement, uint64_t seq) -> Status {
      if (sqlite3_step(statement) != SQLITE_DONE) return error(fmt::format("inserting event {}", seq));
      sqlite3_reset(statement);
      return {};
    };
    constexpr uint64_t kProgressStep = kBatchRows * 16;
    size_t i = 0;
    for (; i + kBatchRows <= events.size(); i += kBatchRows) {
      for (size_t r = 0; r < kBatchRows; ++r) bind_event(batch.get(), static_cast<int>(7 * r + 1), events[i + r]);
      ETT_TRY(run(batch.get(), events[i].seq));
      if (progress && (i + kBatchRows) % kProgressStep == 0 && !progress(i + kBatchRows, events.size()))
        return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
    }
    for (; i < events.size(); ++i) {
      bind_event(single.get(), 1, events[i]);
      ETT_TRY(run(single.get(), events[i].seq));
    }
    if (progress && !progress(events.size(), events.size()))
      return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
    ETT_TRY_ASSIGN(SqliteStatement probe, prepare("INSERT INTO probes (trace_id, probe, label) VALUES (?1, ?2, NULL)"));
    for (int p = 1; p <= trace.probe_count; ++p) {
      sqlite3_bind_int64(probe.get(), 1, trace_id);
      sqlite3_bind_int(probe.get(), 2, p);
      if (sqlite3_step(probe.get()) != SQLITE_DONE) return error("inserting probes");
      sqlite3_reset(probe.get());
    }
    ETT_TRY(transaction.commit());
    return LoadOutcome{trace_id, false};
  }

 private:
  // Rolls back unless committed, so that every early return leaves the database as it was.
  class Transaction {
   public:
    explicit Transaction(SqliteDatabase& db) : m_db(db) {}
    ~Transaction() {
      if (!m_done) sqlite3_exec(m_db.m_db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    Status commit() {
      m_done = true;
      return m_db.exec("COMMIT");
    }

   private:
    SqliteDatabase& m_db;
    bool m_done = false;
  };

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
      if (const auto* n = std::get_if<int64_t>(&value)) sqlite3_bind_int64(statement, i, *n);
      else if (const auto* s = std::get_if<std::string>(&value))
        sqlite3_bind_text(statement, i, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      else sqlite3_bind_null(statement, i);
    }
    return {};
  }

  Expected<ResultTable> fetch(sqlite3_stmt* statement) {
    ResultTable table;
    const int columns = sqlite3_column_count(statement);
    for (int c = 0; c < columns; ++c) table.columns.emplace_back(sqlite3_column_name(statement, c));
    for (;;) {
      const int step = sqlite3_step(statement);
      if (step == SQLITE_DONE) break;
      if (step != SQLITE_ROW) return error("SQL error");
      auto& row = table.rows.emplace_back();
      row.reserve(columns);
      for (int c = 0; c < columns; ++c) {
        const auto* text = sqlite3_column_text(statement, c);
        if (text) row.emplace_back(std::string(reinterpret_cast<const char*>(text)));
        else row.emplace_back(std::nullopt);
      }
    }
    return table;
  }

  SqliteHandle m_db;
  std::string m_path;
};

}  // namespace

Expected<std::unique_ptr<Database>> open_sqlite_database(const std::string& path) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteHandle db(raw);
  if (opened != SQLITE_OK)
    return make_error(ErrorKind::Io,
                      fmt::format("{}: cannot open the database: {}", path, raw ? sqlite3_errmsg(raw) : "out of memory"));
  sqlite3_busy_timeout(db.get(), 10'000);
  return std::unique_ptr<Database>(new SqliteDatabase(std::move(db), path));
}

}  // namespace ett::host
