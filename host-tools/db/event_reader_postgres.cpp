// event_reader_postgres.cpp: a trace's events from PostgreSQL through COPY (SELECT ...) TO STDOUT in binary
// format: big-endian integers per field, parsed as they arrive (no text per cell, no result set held whole),
// from the trace's event_packs (db/event_packs.h) or, for a trace without them, from its events rows.
#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/event_packs.h"
#include "db/event_reader_parts.h"

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
  // One bytea (or other variable-length) field, its bytes left where they are.
  bool bytes(std::string_view& out) {
    uint64_t length = 0;
    if (!u(4, length) || length == 0xFFFFFFFFu || static_cast<size_t>(m_end - m_p) < length) return false;
    out = std::string_view(reinterpret_cast<const char*>(m_p), static_cast<size_t>(length));
    m_p += length;
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

namespace {

Status pg_error(PGconn* conn, const std::string& what) {
  std::string message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return make_error(ErrorKind::Io, fmt::format("PostgreSQL: {}: {}", what, message));
}

// Runs `sql`, a COPY ... TO STDOUT (FORMAT binary), and hands each data message to `rows`, its reader past
// the stream's header; once `rows` returns false the rest of the stream is drained, so that the connection
// stays usable. Returns the server's error, or that the stream had no header; what `rows` found is the
// caller's.
Status copy_out(PGconn* conn, const std::string& sql, const char* what,
                const std::function<bool(FieldReader& reader)>& rows) {
  PgResult started(PQexec(conn, sql.c_str()));
  if (PQresultStatus(started.get()) != PGRES_COPY_OUT) return pg_error(conn, what);
  bool header = true, more = true, headerless = false;
  for (;;) {
    char* raw = nullptr;
    const int size = PQgetCopyData(conn, &raw, 0);
    if (size == -1) break;  // the COPY is over; its result follows
    if (size < 0) return pg_error(conn, what);
    const std::unique_ptr<char, PgFreer> data(raw);
    if (!more) continue;
    FieldReader reader(raw, static_cast<size_t>(size));
    if (header && !skip_header(reader)) {
      headerless = true;
      more = false;
      continue;
    }
    header = false;
    more = rows(reader);
  }
  PgResult finished(PQgetResult(conn));
  const bool copied = PQresultStatus(finished.get()) == PGRES_COMMAND_OK;
  while (PGresult* extra = PQgetResult(conn)) PQclear(extra);
  if (!copied) return pg_error(conn, what);
  if (headerless)
    return make_error(ErrorKind::Io, fmt::format("PostgreSQL: {}: a binary COPY without its header", what));
  return {};
}

// How a range was read: done, or its rows came out of seq order (read it again through ORDER BY).
enum class CopyOutcome { done, out_of_order };

// Rows of the trace with seq in [from, to], a batch at a time; stops handing on rows when `stop` is set.
// `ordered`: through ORDER BY seq (the primary key's index scan); otherwise a plain scan of the trace's
// partition, which a load wrote in seq order: about a third less server time per row, and checked here.
// Each field of a binary COPY costs the server a send function call and a length word, most of its per-row
// work: the small columns travel as one integer (probe | code << 8 | lines << 16), and with the seq too (seq
// << 24 | ...) when every seq of the range fits in 39 bits.
Expected<CopyOutcome> copy_range(PGconn* conn, int64_t trace_id, int64_t from, int64_t to,
                                 const EventColumns& columns, bool ordered, const EventBatchSink& sink,
                                 const std::atomic<bool>* stop) {
  const bool packed_seq = from >= 0 && to < (int64_t{1} << 39);
  const std::string sql = fmt::format(
      "COPY (SELECT {}{} FROM events WHERE trace_id = {} AND seq BETWEEN {} AND {}{}) TO STDOUT (FORMAT "
      "binary)",
      packed_seq ? "(seq << 24) | probe | (code::bigint << 8) | (lines::bigint << 16), tsc"
                 : "seq, tsc, probe::integer | (code::integer << 8) | (lines::integer << 16)",
      columns.time_ns ? ", time_ns" : "", trace_id, from, to, ordered ? " ORDER BY seq" : "");
  const uint64_t field_count = (packed_seq ? 2 : 3) + (columns.time_ns ? 1 : 0);
  std::vector<EventRow> batch;
  batch.reserve(kEventBatchRows);
  bool trailer = false, out_of_order = false, any = false;
  uint64_t last_seq = 0;
  Status failed;
  // After an error (or a stop) the rest of the stream is drained.
  const Status copied = copy_out(conn, sql, "reading events", [&](FieldReader& reader) {
    while (!reader.at_end()) {
      uint64_t fields = 0;
      if (!reader.u(2, fields)) break;
      if (fields == 0xFFFF) {
        trailer = true;
        break;
      }
      int64_t value[4] = {};
      bool null[4] = {};
      bool ok = fields == field_count;
      for (uint64_t i = 0; ok && i < field_count; ++i) ok = reader.integer(value[i], null[i]);
      if (!ok) {
        failed =
            make_error(ErrorKind::Io, "PostgreSQL: reading events: a row that is not the columns asked for");
        break;
      }
      EventRow& row = batch.emplace_back();
      const int64_t small = packed_seq ? value[0] : value[2];
      row.seq = static_cast<uint64_t>(packed_seq ? value[0] >> 24 : value[0]);
      row.tsc = static_cast<uint64_t>(value[1]);
      row.probe = static_cast<uint8_t>(small);
      row.code = static_cast<uint8_t>(small >> 8);
      row.lines = static_cast<uint8_t>(small >> 16);
      row.has_time_ns = columns.time_ns && !null[field_count - 1];
      row.time_ns = columns.time_ns ? value[field_count - 1] : 0;
      if (any && row.seq <= last_seq) {
        out_of_order = true;
        break;
      }
      any = true;
      last_seq = row.seq;
      if (batch.size() == kEventBatchRows) {
        failed = sink(batch);
        batch.clear();
        if (!failed) break;
      }
    }
    return failed && !trailer && !out_of_order && !(stop && stop->load(std::memory_order_relaxed));
  });
  if (!copied) return copied.failure();
  if (!failed) return failed.failure();
  if (out_of_order) return CopyOutcome::out_of_order;
  if (!batch.empty() && !(stop && stop->load(std::memory_order_relaxed))) ETT_TRY(sink(batch));
  return CopyOutcome::done;
}

// The range's rows in seq order: the plain scan, or (when its rows were not in seq order) the ordered one
// after `restart`; only the ordered one when the range cannot be restarted.
Status read_range(PGconn* conn, int64_t trace_id, const SeqRange& range, const EventColumns& columns,
                  bool restartable, const EventBatchSink& sink, const std::function<Status()>& restart,
                  const std::atomic<bool>* stop) {
  // A plain scan of a big table joins (or starts where the last one left off) another scan of it
  // (synchronize_seqscans): rows from the middle of the partition first. Off for this scan.
  if (restartable) {
    PgResult set(PQexec(conn, "SET synchronize_seqscans = off"));
    if (PQresultStatus(set.get()) != PGRES_COMMAND_OK) return pg_error(conn, "reading events");
  }
  auto outcome_or = copy_range(conn, trace_id, range.first, range.last, columns, !restartable, sink, stop);
  if (restartable) PQclear(PQexec(conn, "RESET synchronize_seqscans"));
  ETT_TRY_ASSIGN(CopyOutcome outcome, std::move(outcome_or));
  if (outcome == CopyOutcome::done) return {};
  if (Status restarted = restart(); !restarted)
    return make_error(ErrorKind::Io, "PostgreSQL: " + restarted.error().message);
  ETT_TRY_ASSIGN(outcome, copy_range(conn, trace_id, range.first, range.last, columns, true, sink, stop));
  if (outcome == CopyOutcome::done) return {};
  return make_error(ErrorKind::Io, "PostgreSQL: reading events: rows out of seq order");
}

// The trace's event_packs (packed_trace_sql): nullopt when it has none (a trace loaded before event_packs),
// so that it is read from events.
Expected<std::optional<PackedTrace>> packed_trace(PGconn* conn, int64_t trace_id) {
  PgResult found(PQexec(conn, packed_trace_sql(trace_id).c_str()));
  if (PQresultStatus(found.get()) != PGRES_TUPLES_OK || PQntuples(found.get()) != 1)
    return pg_error(conn, "reading event_packs").failure();
  if (PQgetisnull(found.get(), 0, 0)) return std::optional<PackedTrace>();
  auto column = [&](int i) {
    return PQgetisnull(found.get(), 0, i) ? 0 : std::stoll(PQgetvalue(found.get(), 0, i));
  };
  return std::optional(PackedTrace{column(0), column(1), static_cast<uint64_t>(column(2))});
}

struct PgConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};

// A second connection with the same parameters as `conn` (nullptr when it cannot be made).
std::unique_ptr<PGconn, PgConnCloser> second_connection(PGconn* conn) {
  PQconninfoOption* options = PQconninfo(conn);
  if (!options) return nullptr;
  std::vector<const char*> keywords, values;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (o->val && *o->val) {
      keywords.push_back(o->keyword);
      values.push_back(o->val);
    }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  std::unique_ptr<PGconn, PgConnCloser> second(PQconnectdbParams(keywords.data(), values.data(), 0));
  PQconninfoFree(options);
  if (!second || PQstatus(second.get()) != CONNECTION_OK) return nullptr;
  PQsetNoticeProcessor(
      second.get(), [](void*, const char*) {}, nullptr);
  return second;
}

// Below this many events one COPY reads them all.
constexpr int64_t kSplitEvents = int64_t{1} << 18;

// The trace's events from its packs, in seq order, as one part: one COPY (a second connection for half of
// them cost more than it saved, 0.35 against 0.30 s for the histogram by code of 10 M events). The server
// sends each pack's bytes as they lie in its page, and unpacking here costs less than parsing the rows of
// events would.
Status read_packs(PGconn* conn, int64_t trace_id, const PackedTrace& trace, EventPartSink& sink) {
  auto damaged = [trace_id](const std::string& what) {
    return make_error(ErrorKind::Io,
                      fmt::format("PostgreSQL: event_packs of trace {}: {}; after DELETE FROM event_packs "
                                  "WHERE trace_id = {} the trace is read from events, and `ett load` of its "
                                  "image writes its packs again",
                                  trace_id, what, trace_id));
  };
  const SeqRange part{trace.first_seq, trace.last_seq};
  ETT_TRY(sink.begin(std::span(&part, 1)));
  PackedTraceReader reader([&sink](std::span<const EventRow> rows) { return sink.take(0, rows); }, damaged);
  const std::string sql = fmt::format(
      "COPY (SELECT first_seq, last_seq, events, data FROM event_packs WHERE trace_id = {} ORDER BY "
      "first_seq) TO STDOUT (FORMAT binary)",
      trace_id);
  bool trailer = false;
  Status failed;
  const Status copied = copy_out(conn, sql, "reading event_packs", [&](FieldReader& rows) {
    while (failed && !rows.at_end()) {
      uint64_t fields = 0;
      if (!rows.u(2, fields)) break;
      if (fields == 0xFFFF) {
        trailer = true;
        break;
      }
      int64_t value[3] = {};
      bool null[3] = {};
      std::string_view packed;
      bool ok = fields == 4;
      for (int i = 0; ok && i < 3; ++i) ok = rows.integer(value[i], null[i]) && !null[i];
      if (!ok || !rows.bytes(packed)) {
        failed = damaged("a row that is not the columns asked for");
        break;
      }
      failed = reader.add(value[0], value[1], value[2], packed);
    }
    return failed && !trailer;
  });
  ETT_TRY(copied);
  ETT_TRY(failed);
  return reader.finish(trace.events);
}

}  // namespace

Status read_postgres_events(PGconn* conn, int64_t trace_id, const EventColumns& columns,
                            EventPartSink& sink) {
  // Without time_ns (a column the packs leave out: the reader computes times from the TSC), from the packs.
  if (!columns.time_ns) {
    ETT_TRY_ASSIGN(std::optional<PackedTrace> packed, packed_trace(conn, trace_id));
    if (packed) return read_packs(conn, trace_id, *packed, sink);
  }
  // The seq range (two steps down the primary key).
  const std::string range_sql =
      fmt::format("SELECT min(seq), max(seq) FROM events WHERE trace_id = {}", trace_id);
  PgResult range(PQexec(conn, range_sql.c_str()));
  if (PQresultStatus(range.get()) != PGRES_TUPLES_OK || PQntuples(range.get()) != 1)
    return pg_error(conn, "reading events");
  if (PQgetisnull(range.get(), 0, 0)) return sink.begin({});
  const int64_t first = std::stoll(PQgetvalue(range.get(), 0, 0));
  const int64_t last = std::stoll(PQgetvalue(range.get(), 0, 1));
  // A big trace: the upper half of the seq range comes through a second connection (a second server
  // process) read by a second thread while this one reads the lower half. The server's per-row work is most
  // of a read, so two backends take about half the wall time. Loads only add traces, so both connections
  // see the same rows of this one.
  std::unique_ptr<PGconn, PgConnCloser> second;
  if (last - first >= kSplitEvents && PQtransactionStatus(conn) == PQTRANS_IDLE)
    second = second_connection(conn);
  const std::vector<SeqRange> parts = split_range(first, last, second ? 2 : 1);
  return read_parts(
      parts,
      [&](size_t part, const EventBatchSink& rows, const std::function<Status()>& restart,
          const std::atomic<bool>* stop) {
        return read_range(part == 0 ? conn : second.get(), trace_id, parts[part], columns,
                          sink.restartable(part), rows, restart, stop);
      },
      sink);
}

}  // namespace ett::host
