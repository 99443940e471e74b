// postgres.cpp: PostgreSQL engine: RAII libpq handles, text results, the bulk load as one transaction with
// COPY events FROM STDIN (FORMAT binary).
#include "db/postgres.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstring>

#include "db/schema.h"
#include "image/event_writer.h"

namespace ett::host {

namespace {

struct PgConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct PgResultClearer {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgConn = std::unique_ptr<PGconn, PgConnCloser>;
using PgResult = std::unique_ptr<PGresult, PgResultClearer>;

// Big-endian appends for the binary COPY stream.
class CopyBuffer {
 public:
  void i16(int16_t value) { put(static_cast<uint16_t>(value), 2); }
  void i32(int32_t value) { put(static_cast<uint32_t>(value), 4); }
  void field8(int64_t value) {
    i32(8);
    put(static_cast<uint64_t>(value), 8);
  }
  void field2(int16_t value) {
    i32(2);
    i16(value);
  }
  void null_field() { i32(-1); }
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const char*>(data);
    m_data.insert(m_data.end(), p, p + size);
  }
  size_t size() const { return m_data.size(); }
  const char* data() const { return m_data.data(); }
  void clear() { m_data.clear(); }
  void reserve(size_t size) { m_data.reserve(size); }

 private:
  void put(uint64_t value, int size) {
    char out[8];
    for (int i = 0; i < size; ++i) out[i] = static_cast<char>(value >> (8 * (size - 1 - i)));
    m_data.insert(m_data.end(), out, out + size);
  }
  std::vector<char> m_data;
};

std::string param_text(const SqlValue& value, bool& is_null) {
  is_null = false;
  if (const auto* n = std::get_if<int64_t>(&value)) return std::to_string(*n);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  is_null = true;
  return {};
}

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(PgConn conn) : m_conn(std::move(conn)) {}

  DbEngine engine() const override { return DbEngine::Postgres; }

  Status ensure_schema() override {
    ETT_TRY(exec("SET client_min_messages = warning"));
    for (const std::string& statement : schema_statements(DbEngine::Postgres)) ETT_TRY(exec(statement));
    return {};
  }

  Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      bool is_null = false;
      texts[i] = param_text(params[i], is_null);
      values[i] = is_null ? nullptr : texts[i].c_str();
    }
    PgResult result(PQexecParams(m_conn.get(), sql.c_str(), static_cast<int>(params.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0));
    return fetch(result.get());
  }

  Expected<ResultTable> run_script(const std::string& sql) override {
    PgResult result(PQexec(m_conn.get(), sql.c_str()));
    return fetch(result.get());
  }

  Status read_events(int64_t trace_id, const EventBatchSink& sink) override {
    return read_postgres_events(m_conn.get(), trace_id, sink);
  }

  Expected<LoadOutcome> load_trace(const TraceRow& trace, std::span<const Event> events, uint64_t start_tsc,
                                   uint64_t tsc_hz, const LoadProgress& progress) override {
    ETT_TRY(exec("BEGIN"));
    Transaction transaction(*this);
    // Two loads of the same trace at once: the second waits here and then finds the first one's row.
    ETT_TRY(exec("LOCK TABLE traces IN SHARE ROW EXCLUSIVE MODE"));
    const SqlValue identity[] = {trace.disk_uuid, int64_t{trace.session}, trace.content_hash};
    ETT_TRY_ASSIGN(
        ResultTable found,
        query("SELECT trace_id FROM traces WHERE disk_uuid = $1 AND session = $2 AND content_hash = $3",
              identity));
    if (!found.rows.empty() && found.rows[0][0]) return LoadOutcome{std::stoll(*found.rows[0][0]), true};
    ETT_TRY_ASSIGN(ResultTable inserted, query(insert_trace_sql(), trace.values));
    if (inserted.rows.empty() || !inserted.rows[0][0])
      return error("INSERT INTO traces returned no trace_id");
    const int64_t trace_id = std::stoll(*inserted.rows[0][0]);

    PgResult copy(
        PQexec(m_conn.get(),
               "COPY events (trace_id, seq, probe, code, tsc, time_ns, lines) FROM STDIN (FORMAT binary)"));
    if (PQresultStatus(copy.get()) != PGRES_COPY_IN) return error("COPY events");
    CopyBuffer buffer;
    constexpr size_t kSendBytes = 256 << 10;
    buffer.reserve(kSendBytes + 256);
    static const char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
    buffer.bytes(kSignature, 11);
    buffer.i32(0);  // flags
    buffer.i32(0);  // header extension length
    const EventTiming timing{start_tsc, tsc_hz};
    uint64_t reported = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& event = events[i];
      buffer.i16(7);
      buffer.field8(trace_id);
      buffer.field8(static_cast<int64_t>(event.seq));
      buffer.field2(event.probe);
      buffer.field2(event.code);
      buffer.field8(static_cast<int64_t>(event.tsc));
      if (tsc_hz)
        buffer.field8(tsc_to_ns(event.tsc, timing));
      else
        buffer.null_field();
      buffer.field2(event.lines);
      if (buffer.size() >= kSendBytes) {
        ETT_TRY(send(buffer));
        if (progress && i + 1 - reported >= 2048) {
          reported = i + 1;
          if (!progress(i + 1, events.size())) {
            PQputCopyEnd(m_conn.get(), "load abandoned");
            PgResult ignored(PQgetResult(m_conn.get()));
            return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
          }
        }
      }
    }
    buffer.i16(-1);  // trailer
    ETT_TRY(send(buffer));
    if (PQputCopyEnd(m_conn.get(), nullptr) != 1) return error("COPY events");
    PgResult copied(PQgetResult(m_conn.get()));
    if (PQresultStatus(copied.get()) != PGRES_COMMAND_OK) return error("COPY events");
    while (PGresult* extra = PQgetResult(m_conn.get())) PQclear(extra);
    if (progress && !progress(events.size(), events.size()))
      return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");

    const SqlValue probe_params[] = {trace_id, int64_t{trace.probe_count}};
    ETT_TRY_ASSIGN(
        ResultTable ignored,
        query("INSERT INTO probes (trace_id, probe) SELECT $1::bigint, generate_series(1, $2::int)",
              probe_params));
    ETT_TRY(transaction.commit());
    return LoadOutcome{trace_id, false};
  }

 private:
  class Transaction {
   public:
    explicit Transaction(PostgresDatabase& db) : m_db(db) {}
    ~Transaction() {
      if (!m_done) PgResult(PQexec(m_db.m_conn.get(), "ROLLBACK"));
    }
    Status commit() {
      m_done = true;
      return m_db.exec("COMMIT");
    }

   private:
    PostgresDatabase& m_db;
    bool m_done = false;
  };

  ett::Failure<HostError> error(const std::string& what) const {
    std::string message = PQerrorMessage(m_conn.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return make_error(ErrorKind::Io, fmt::format("PostgreSQL: {}: {}", what, message));
  }

  Status exec(const char* sql) {
    PgResult result(PQexec(m_conn.get(), sql));
    const ExecStatusType status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return error(sql);
    return {};
  }
  Status exec(const std::string& sql) { return exec(sql.c_str()); }

  Status send(CopyBuffer& buffer) {
    if (PQputCopyData(m_conn.get(), buffer.data(), static_cast<int>(buffer.size())) != 1)
      return error("COPY events");
    buffer.clear();
    return {};
  }

  Expected<ResultTable> fetch(PGresult* result) {
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(m_conn.get());
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
      return make_error(ErrorKind::Usage, "PostgreSQL: " + message);
    }
    ResultTable table;
    const int columns = PQnfields(result);
    for (int c = 0; c < columns; ++c) table.columns.emplace_back(PQfname(result, c));
    const int rows = PQntuples(result);
    table.rows.reserve(rows);
    for (int r = 0; r < rows; ++r) {
      auto& row = table.rows.emplace_back();
      row.reserve(columns);
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result, r, c))
          row.emplace_back(std::nullopt);
        else
          row.emplace_back(std::string(PQgetvalue(result, r, c), PQgetlength(result, r, c)));
      }
    }
    return table;
  }

  PgConn m_conn;
};

}  // namespace

Expected<std::unique_ptr<Database>> open_postgres_database(const std::string& uri) {
  PgConn conn(PQconnectdb(uri.c_str()));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    std::string message = conn ? PQerrorMessage(conn.get()) : "out of memory";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return make_error(ErrorKind::Io, "cannot connect to PostgreSQL: " + message);
  }
  // Notices ("relation already exists, skipping") are not for the user of `ett`.
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Database>(new PostgresDatabase(std::move(conn)));
}

}  // namespace ett::host
