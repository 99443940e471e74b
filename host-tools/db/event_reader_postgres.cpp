// event_reader_postgres.cpp: a trace's events from PostgreSQL through COPY (SELECT ...) TO STDOUT in binary
// format: big-endian integers per field, parsed as they arrive (no text per cell, no result set held whole).
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstring>
#include <memory>
#include <vector>

#include "db/event_reader.h"

namespace ett::host {

namespace {

struct PgResultClearer {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, PgResultClearer>;

struct PgFreer {
  void operator()(char* data) const { PQfreemem(data); }
};

// Reads the big-endian fields of one COPY data message.
class FieldReader {
 public:
  FieldReader(const char* data, size_t size)
      : m_p(reinterpret_cast<const unsigned char*>(data)), m_end(m_p + size) {}

  bool skip(size_t bytes) {
    if (static_cast<size_t>(m_end - m_p) < bytes) return false;
    m_p += bytes;
    return true;
  }
  bool u(size_t bytes, uint64_t& out) {
    if (static_cast<size_t>(m_end - m_p) < bytes) return false;
    out = 0;
    for (size_t i = 0; i < bytes; ++i) out = (out << 8) | m_p[i];
    m_p += bytes;
    return true;
  }
  // One integer field (2, 4 or 8 bytes, sign-extended); `null` when its length is -1.
  bool integer(int64_t& out, bool& null) {
    uint64_t length = 0;
    if (!u(4, length)) return false;
    null = length == 0xFFFFFFFFu;
    if (null) {
      out = 0;
      return true;
    }
    if (length != 2 && length != 4 && length != 8) return false;
    uint64_t raw = 0;
    if (!u(length, raw)) return false;
    const unsigned shift = static_cast<unsigned>(64 - 8 * length);
    out = static_cast<int64_t>(raw << shift) >> shift;
    return true;
  }
  bool at_end() const { return m_p == m_end; }

 private:
  const unsigned char* m_p;
  const unsigned char* m_end;
};

// The binary COPY header: signature, flags, header extension.
bool skip_header(FieldReader& reader) {
  static const char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  uint64_t flags = 0, extension = 0;
  return reader.skip(sizeof kSignature) && reader.u(4, flags) && reader.u(4, extension) &&
         reader.skip(extension);
}

}  // namespace

Status read_postgres_events(PGconn* conn, int64_t trace_id, const EventBatchSink& sink) {
  auto error = [&](const std::string& what) {
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return make_error(ErrorKind::Io, fmt::format("PostgreSQL: {}: {}", what, message));
  };
  const std::string sql = fmt::format(
      "COPY (SELECT seq, probe, code, tsc, time_ns, lines FROM events WHERE trace_id = {} ORDER BY seq) TO "
      "STDOUT (FORMAT binary)",
      trace_id);
  PgResult started(PQexec(conn, sql.c_str()));
  if (PQresultStatus(started.get()) != PGRES_COPY_OUT) return error("reading events");
  std::vector<EventRow> batch;
  batch.reserve(kEventBatchRows);
  bool header = true, trailer = false;
  Status failed;
  for (;;) {
    char* raw = nullptr;
    const int size = PQgetCopyData(conn, &raw, 0);
    if (size == -1) break;  // the COPY is over; its result follows
    if (size < 0) return error("reading events");
    const std::unique_ptr<char, PgFreer> data(raw);
    if (!failed || trailer) continue;  // drain the rest of the stream so that the connection stays usable
    FieldReader reader(raw, static_cast<size_t>(size));
    if (header && !skip_header(reader)) {
      failed = make_error(ErrorKind::Io, "PostgreSQL: reading events: a binary COPY without its header");
      continue;
    }
    header = false;
    while (!reader.at_end()) {
      uint64_t fields = 0;
      if (!reader.u(2, fields)) break;
      if (fields == 0xFFFF) {
        trailer = true;
        break;
      }
      int64_t value[6];
      bool null[6];
      bool ok = fields == 6;
      for (int i = 0; ok && i < 6; ++i) ok = reader.integer(value[i], null[i]);
      if (!ok) {
        failed = make_error(ErrorKind::Io, "PostgreSQL: reading events: a row that is not 6 integers");
        break;
      }
      EventRow& row = batch.emplace_back();
      row.seq = static_cast<uint64_t>(value[0]);
      row.probe = static_cast<uint8_t>(value[1]);
      row.code = static_cast<uint8_t>(value[2]);
      row.tsc = static_cast<uint64_t>(value[3]);
      row.has_time_ns = !null[4];
      row.time_ns = value[4];
      row.lines = static_cast<uint8_t>(value[5]);
      if (batch.size() == kEventBatchRows) {
        failed = sink(batch);
        batch.clear();
        if (!failed) break;
      }
    }
  }
  PgResult finished(PQgetResult(conn));
  const bool copied = PQresultStatus(finished.get()) == PGRES_COMMAND_OK;
  while (PGresult* extra = PQgetResult(conn)) PQclear(extra);
  if (!copied) return error("reading events");
  if (!failed) return failed;
  if (!batch.empty()) return sink(batch);
  return {};
}

}  // namespace ett::host
