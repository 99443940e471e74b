// postgres.cpp: PostgreSQL engine: RAII libpq handles, text results, the bulk load as one transaction with
// COPY events FROM STDIN (FORMAT binary).
#include "db/postgres.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
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

// The binary COPY format's signature (with its NUL): both directions start with it.
constexpr char kCopySignature[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', '\377', '\r', '\n', '\0'};

// Big-endian reads of one binary COPY message; a read past the end gives 0 and marks overrun.
class CopyReader {
 public:
  void assign(const char* data, size_t size) {
    m_data = reinterpret_cast<const uint8_t*>(data);
    m_size = size;
    m_at = 0;
  }
  bool done() const { return m_at >= m_size; }
  size_t position() const { return m_at; }
  bool overrun() const { return m_overrun; }
  void skip(size_t size) {
    if (size > m_size - m_at) m_overrun = true;
    m_at = std::min(m_size, m_at + size);
  }
  int16_t i16() { return static_cast<int16_t>(integer(2)); }
  int32_t i32() { return static_cast<int32_t>(integer(4)); }
  // A signed big-endian integer of 2, 4 or 8 bytes.
  int64_t integer(size_t size) {
    if (size > 8 || size > m_size - m_at) {
      m_overrun = true;
      m_at = m_size;
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) value = value << 8 | m_data[m_at + i];
    m_at += size;
    const unsigned shift = static_cast<unsigned>(64 - 8 * size);
    return size ? static_cast<int64_t>(value << shift) >> shift : 0;
  }

 private:
  const uint8_t* m_data = nullptr;
  size_t m_size = 0;
  size_t m_at = 0;
  bool m_overrun = false;
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
    return apply_schema(*this);
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

  Status begin_load() override {
    ETT_TRY(exec("BEGIN"));
    // Two loads of the same trace at once: the second waits here and then finds the first one's row.
    if (Status locked = exec("LOCK TABLE traces IN SHARE ROW EXCLUSIVE MODE"); !locked) {
      PgResult(PQexec(m_conn.get(), "ROLLBACK"));
      return locked;
    }
    return {};
  }

  Status end_load(bool commit) override {
    if (commit) return exec("COMMIT");
    PgResult(PQexec(m_conn.get(), "ROLLBACK"));
    return {};
  }

  Status insert_events(int64_t trace_id, std::span<const Event> events, uint64_t start_tsc, uint64_t tsc_hz,
                       const LoadProgress& progress) override {
    PgResult copy(
        PQexec(m_conn.get(),
               "COPY events (trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux) FROM STDIN "
               "(FORMAT binary)"));
    if (PQresultStatus(copy.get()) != PGRES_COPY_IN) return error("COPY events");
    CopyBuffer buffer;
    constexpr size_t kSendBytes = 256 << 10;
    buffer.reserve(kSendBytes + 256);
    buffer.bytes(kCopySignature, sizeof(kCopySignature));
    buffer.i32(0);  // flags
    buffer.i32(0);  // header extension length
    const EventTiming timing{start_tsc, tsc_hz};
    uint64_t reported = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& event = events[i];
      buffer.i16(9);
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
      buffer.field2(event.flags);
      buffer.field8(event.aux);
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
    return {};
  }

  // COPY ... TO STDOUT (FORMAT binary): no text conversion per cell, rows as they come.
  Status scan_events(int64_t trace_id, const StoredEventSink& sink) override {
    PgResult copy(
        PQexec(m_conn.get(), fmt::format("COPY (SELECT seq, tsc, probe, code, lines, flags, aux FROM "
                                         "events WHERE trace_id = {} ORDER BY seq) TO STDOUT "
                                         "(FORMAT binary)",
                                         trace_id)
                                 .c_str()));
    if (PQresultStatus(copy.get()) != PGRES_COPY_OUT) return error("COPY events out");
    // Messages need not end where rows do (the header comes with the first row or alone): the bytes are
    // gathered, and only whole rows are taken from them.
    std::string pending;
    size_t at = 0;
    bool header = true, trailer = false, bad = false;
    for (;;) {
      char* data = nullptr;
      const int got = PQgetCopyData(m_conn.get(), &data, 0);
      if (got == -1) break;
      if (got < 0) return error("COPY events out");
      pending.erase(0, at);
      at = 0;
      pending.append(data, static_cast<size_t>(got));
      PQfreemem(data);
      for (;;) {
        CopyReader reader;
        reader.assign(pending.data() + at, pending.size() - at);
        if (header) {
          reader.skip(sizeof(kCopySignature) + 4);
          reader.skip(static_cast<size_t>(reader.i32()));
          if (reader.overrun()) break;
          header = false;
          at += reader.position();
          continue;
        }
        if (reader.done() || trailer || bad) break;
        const int16_t fields = reader.i16();
        if (fields == -1) {
          trailer = true;
          at += reader.position();
          break;
        }
        if (fields != 7) {
          bad = true;
          break;
        }
        int64_t values[7];
        bool present[7];
        for (int f = 0; f < 7; ++f) {
          const int32_t size = reader.i32();
          present[f] = size >= 0;
          values[f] = present[f] ? reader.integer(static_cast<size_t>(size)) : 0;
        }
        if (reader.overrun()) break;  // the rest of the row is in the next message
        at += reader.position();
        StoredEvent stored;
        stored.event = Event{static_cast<uint64_t>(values[0]), static_cast<uint64_t>(values[1]),
                             static_cast<uint8_t>(values[2]),  static_cast<uint8_t>(values[3]),
                             static_cast<uint8_t>(values[4]),  static_cast<uint8_t>(values[5]),
                             static_cast<uint32_t>(values[6])};
        stored.complete = present[5] && present[6];
        sink(stored);
      }
    }
    bad = bad || !trailer || at != pending.size();
    PgResult finished(PQgetResult(m_conn.get()));
    if (PQresultStatus(finished.get()) != PGRES_COMMAND_OK) return error("COPY events out");
    while (PGresult* extra = PQgetResult(m_conn.get())) PQclear(extra);
    if (bad) return make_error(ErrorKind::Io, "PostgreSQL: COPY events out: a row in an unexpected layout");
    return {};
  }

 private:
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
