// postgres.cpp: PostgreSQL engine: RAII libpq handles, text results, the bulk load as one transaction with
// COPY events FROM STDIN (FORMAT binary).
#include "db/postgres.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <thread>

#include "db/event_packs.h"
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

// A trace of at least this many events is loaded as two partitions by two connections at once.
constexpr size_t kSplitEvents = size_t{1} << 17;

// Big-endian appends for the binary COPY stream.
class CopyBuffer {
 public:
  void i16(int16_t value) { put(static_cast<uint16_t>(value), 2); }
  void i32(int32_t value) { put(static_cast<uint32_t>(value), 4); }
  void field8(int64_t value) {
    i32(8);
    put(static_cast<uint64_t>(value), 8);
  }
  void field4(int32_t value) {
    i32(4);
    i32(value);
  }
  void field2(int16_t value) {
    i32(2);
    i16(value);
  }
  void bytes_field(const std::string& value) {
    i32(static_cast<int32_t>(value.size()));
    bytes(value.data(), value.size());
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
    const uint64_t big = __builtin_bswap64(value) >> (8 * (8 - size));
    const size_t at = m_data.size();
    m_data.resize(at + static_cast<size_t>(size));
    std::memcpy(m_data.data() + at, &big, static_cast<size_t>(size));
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

ett::Failure<HostError> pg_error(PGconn* conn, const std::string& what) {
  std::string message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return make_error(ErrorKind::Io, fmt::format("PostgreSQL: {}: {}", what, message));
}

Status pg_exec(PGconn* conn, const std::string& sql) {
  PgResult result(PQexec(conn, sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return pg_error(conn, sql);
  return {};
}

// Called after each buffer a COPY sends with the events sent so far; false abandons the COPY.
using CopyProgress = std::function<bool(uint64_t sent)>;

// Starts `sql`, a COPY ... FROM STDIN (FORMAT binary), with the stream's header in `buffer`.
Status begin_copy_in(PGconn* conn, const std::string& sql, CopyBuffer& buffer, const char* what) {
  PgResult copy(PQexec(conn, sql.c_str()));
  if (PQresultStatus(copy.get()) != PGRES_COPY_IN) return pg_error(conn, what);
  buffer.bytes(kCopySignature, sizeof(kCopySignature));
  buffer.i32(0);  // flags
  buffer.i32(0);  // header extension length
  return {};
}

// Sends the rest of `buffer` and the stream's trailer, ends the COPY and returns its result.
Status end_copy_in(PGconn* conn, CopyBuffer& buffer, const char* what) {
  buffer.i16(-1);  // trailer
  if (PQputCopyData(conn, buffer.data(), static_cast<int>(buffer.size())) != 1 ||
      PQputCopyEnd(conn, nullptr) != 1)
    return pg_error(conn, what);
  buffer.clear();
  PgResult copied(PQgetResult(conn));
  const bool ok = PQresultStatus(copied.get()) == PGRES_COMMAND_OK;
  while (PGresult* extra = PQgetResult(conn)) PQclear(extra);
  if (!ok) return pg_error(conn, what);
  return {};
}

// A part's event_packs rows, packed as its events go to the server and kept in an unnamed temporary file
// until their own COPY (the connection is busy with the events' COPY until then): a load's memory does not
// grow with the session, where the packs take about 7 bytes an event.
class PackFile {
 public:
  void add(const Event& event) { m_packer.add(event); }
  // Writes the packs closed so far to the file (all of them once `finish`).
  Status spill(bool finish = false) {
    if (finish) m_packer.finish();
    const std::vector<EventPack> packs = m_packer.take();
    if (packs.empty()) return {};
    if (!m_file) m_file.reset(std::tmpfile());
    if (!m_file) return failed();
    for (const EventPack& pack : packs) {
      const Header header{pack.first_seq, pack.last_seq, pack.events,
                          static_cast<uint32_t>(pack.data.size())};
      if (std::fwrite(&header, sizeof header, 1, m_file.get()) != 1 ||
          std::fwrite(pack.data.data(), 1, pack.data.size(), m_file.get()) != pack.data.size())
        return failed();
    }
    return {};
  }
  // COPY event_packs FROM STDIN (FORMAT binary): every pack written, a 256 KiB message at a time.
  Status copy(PGconn* conn, int64_t trace_id) {
    if (!m_file) return {};
    if (std::fflush(m_file.get()) != 0 || std::fseek(m_file.get(), 0, SEEK_SET) != 0) return failed();
    CopyBuffer buffer;
    constexpr size_t kSendBytes = 256 << 10;
    buffer.reserve(kSendBytes + kPackBytes + 64);
    ETT_TRY(begin_copy_in(conn,
                          "COPY event_packs (trace_id, first_seq, last_seq, events, data) FROM STDIN (FORMAT "
                          "binary)",
                          buffer, "COPY event_packs"));
    auto send = [&]() -> bool {
      const bool sent = PQputCopyData(conn, buffer.data(), static_cast<int>(buffer.size())) == 1;
      buffer.clear();
      return sent;
    };
    std::string data;
    for (Header header; std::fread(&header, sizeof header, 1, m_file.get()) == 1;) {
      data.resize(header.bytes);
      if (header.bytes > kPackBytes || std::fread(data.data(), 1, data.size(), m_file.get()) != data.size()) {
        PQputCopyEnd(conn, "load abandoned");
        while (PGresult* ignored = PQgetResult(conn)) PQclear(ignored);
        if (std::ferror(m_file.get())) return failed();
        return make_error(ErrorKind::Io, "the load's temporary file of event_packs: a pack cut short");
      }
      buffer.i16(5);
      buffer.field8(trace_id);
      buffer.field8(static_cast<int64_t>(header.first_seq));
      buffer.field8(static_cast<int64_t>(header.last_seq));
      buffer.field4(static_cast<int32_t>(header.events));
      buffer.bytes_field(data);
      if (buffer.size() >= kSendBytes && !send()) return pg_error(conn, "COPY event_packs");
    }
    ETT_TRY(end_copy_in(conn, buffer, "COPY event_packs"));
    m_file.reset();
    return {};
  }

 private:
  struct Header {
    uint64_t first_seq, last_seq;
    uint32_t events, bytes;
  };
  struct Closer {
    void operator()(FILE* file) const { std::fclose(file); }
  };
  ett::Failure<HostError> failed() const {
    return make_error(ErrorKind::Io, errno_message("the load's temporary file of event_packs", errno));
  }

  EventPacker m_packer;
  std::unique_ptr<FILE, Closer> m_file;
};

// COPY `table` FROM STDIN (FORMAT binary) with the events of `feed` as rows of trace_id, in 256 KiB messages,
// each event also packed into `packs`. An error from the feed, or a progress callback that returns false,
// abandons the COPY.
Status copy_events(PGconn* conn, const std::string& table, int64_t trace_id, const EventFeed& feed,
                   const EventTiming& timing, bool freeze, PackFile& packs, const CopyProgress& progress) {
  auto send = [&](CopyBuffer& buffer) -> Status {
    if (PQputCopyData(conn, buffer.data(), static_cast<int>(buffer.size())) != 1)
      return pg_error(conn, "COPY events");
    buffer.clear();
    return {};
  };
  auto abandon = [&](ErrorKind kind, std::string message) -> Status {
    PQputCopyEnd(conn, "load abandoned");
    while (PGresult* ignored = PQgetResult(conn)) PQclear(ignored);
    return make_error(kind, std::move(message));
  };
  CopyBuffer buffer;
  constexpr size_t kSendBytes = 256 << 10;
  buffer.reserve(kSendBytes + 256);
  ETT_TRY(begin_copy_in(conn,
                        fmt::format("COPY {} (trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux) "
                                    "FROM STDIN (FORMAT binary{})",
                                    table, freeze ? ", FREEZE" : ""),
                        buffer, "COPY events"));
  uint64_t encoded = 0;
  for (;;) {
    Expected<std::span<const Event>> block = feed();
    if (!block) return abandon(block.error().kind, block.error().message);
    if (block->empty()) break;
    for (const Event& event : *block) {
      buffer.i16(9);
      buffer.field8(trace_id);
      buffer.field8(static_cast<int64_t>(event.seq));
      buffer.field2(event.probe);
      buffer.field2(event.code);
      buffer.field8(static_cast<int64_t>(event.tsc));
      if (timing.hz)
        buffer.field8(tsc_to_ns(event.tsc, timing));
      else
        buffer.null_field();
      buffer.field2(event.lines);
      buffer.field2(event.flags);
      buffer.field8(event.aux);
      packs.add(event);
      ++encoded;
      if (buffer.size() >= kSendBytes) {
        ETT_TRY(send(buffer));
        if (progress && !progress(encoded))
          return abandon(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
      }
    }
    if (Status spilled = packs.spill(); !spilled)
      return abandon(spilled.error().kind, spilled.error().message);
  }
  ETT_TRY(end_copy_in(conn, buffer, "COPY events"));
  return packs.spill(true);
}

// One partition of a trace's events: events [begin, end) of the load, rows with seq in [from, to) (nullopt:
// unbounded on that side).
struct EventPart {
  std::string table;
  uint64_t begin = 0, end = 0;
  std::optional<uint64_t> from, to;
};

// Creates the part's table with a CHECK constraint that matches its partition bound (so that ATTACH need not
// scan it), fills it with COPY FREEZE (allowed because the table is new in this transaction: no hint bits
// or freezing left for later), then builds its primary key (cheaper than keeping it up row by row) and its
// statistics (without them the planner reads a trace by bitmap scan and sort). An index a user added to
// events is built when the part is attached. With `write_packs` (the load's own connection) the part's
// event_packs rows go in right after its rows, while the other connection still works; the other part's packs
// wait for the load's transaction.
Status fill_part(PGconn* conn, int64_t trace_id, const EventPart& part, const EventFeed& feed,
                 const EventTiming& timing, PackFile& packs, bool write_packs, const CopyProgress& progress) {
  std::string check = fmt::format("trace_id = {}", trace_id);
  if (part.from) check += fmt::format(" AND seq >= {}", *part.from);
  if (part.to) check += fmt::format(" AND seq < {}", *part.to);
  ETT_TRY(pg_exec(conn, fmt::format("CREATE TABLE {0} (LIKE events INCLUDING DEFAULTS, CONSTRAINT {0}_bound "
                                    "CHECK ({1}))",
                                    part.table, check)));
  ETT_TRY(copy_events(conn, part.table, trace_id, feed, timing, true, packs, progress));
  if (write_packs) ETT_TRY(packs.copy(conn, trace_id));
  ETT_TRY(pg_exec(conn,
                  fmt::format("ALTER TABLE {0} ADD PRIMARY KEY (trace_id, seq); ANALYZE {0} (trace_id, seq, "
                              "time_ns)",
                              part.table)));
  return {};
}

std::string part_bounds(int64_t trace_id, const EventPart& part) {
  return fmt::format("FOR VALUES FROM ({}, {}) TO ({}, {})", trace_id,
                     part.from ? std::to_string(*part.from) : "MINVALUE", part.to ? trace_id : trace_id + 1,
                     part.to ? std::to_string(*part.to) : "MINVALUE");
}

class PostgresDatabase final : public Database {
 public:
  PostgresDatabase(PgConn conn, std::string uri) : m_conn(std::move(conn)), m_uri(std::move(uri)) {}

  DbEngine engine() const override { return DbEngine::Postgres; }

  Status ensure_schema() override {
    ETT_TRY(exec("SET client_min_messages = warning"));
    return apply_schema(*this);
  }

  Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) override {
    PgResult result = exec_params(sql, params);
    return fetch(result.get());
  }

  // Through a cursor, kRowBatch rows per FETCH, in a transaction of its own unless one is open.
  Status query_rows(const std::string& sql, std::span<const SqlValue> params, RowSink& sink) override {
    constexpr int kRowBatch = 4096;
    const bool own = PQtransactionStatus(m_conn.get()) == PQTRANS_IDLE;
    if (own) ETT_TRY(exec("BEGIN"));
    auto read = [&]() -> Status {
      PgResult declared = exec_params("DECLARE ett_rows NO SCROLL CURSOR FOR " + sql, params);
      ETT_TRY(result_status(declared.get()));
      const std::string fetch_sql = fmt::format("FETCH FORWARD {} FROM ett_rows", kRowBatch);
      for (bool first = true;; first = false) {
        PgResult batch(PQexec(m_conn.get(), fetch_sql.c_str()));
        ETT_TRY(result_status(batch.get()));
        ETT_TRY(each_row(batch.get(), sink, first));
        if (PQntuples(batch.get()) < kRowBatch) break;
      }
      return exec("CLOSE ett_rows");
    };
    Status done = read();
    if (own) {
      if (done)
        done = exec("COMMIT");
      else
        PgResult(PQexec(m_conn.get(), "ROLLBACK"));
    }
    return done;
  }

  Expected<ResultTable> run_script(const std::string& sql) override {
    PgResult result(PQexec(m_conn.get(), sql.c_str()));
    return fetch(result.get());
  }

  // One statement goes through the extended protocol in single-row mode, its rows handed over kRowBatch at
  // a time. The extended protocol refuses a script of several statements when it parses it, before any runs
  // (a syntax error, as a real one is): that script then runs as one simple query, its last result whole.
  Status run_script_rows(const std::string& sql, RowSink& sink) override {
    constexpr size_t kRowBatch = 4096;
    PGconn* conn = m_conn.get();
    if (PQsendQueryParams(conn, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1)
      return result_status(nullptr);
    PQsetSingleRowMode(conn);
    Status status;
    bool parse_refused = false;
    std::vector<std::vector<DbValue>> batch;  // grows to kRowBatch rows, then reused
    size_t filled = 0;
    auto hand_over = [&] {
      if (filled > 0 && status) status = sink.rows(std::span(batch).first(filled));
      filled = 0;
    };
    bool began = false;
    while (PGresult* raw = PQgetResult(conn)) {
      PgResult result(raw);
      const ExecStatusType kind = PQresultStatus(raw);
      if (kind == PGRES_COPY_IN || kind == PGRES_COPY_OUT || kind == PGRES_COPY_BOTH)
        return make_error(ErrorKind::Usage, "PostgreSQL: ett sql cannot run COPY FROM STDIN or TO STDOUT");
      if (!status) continue;  // the rest of a query that failed or was cancelled
      if (kind == PGRES_SINGLE_TUPLE || kind == PGRES_TUPLES_OK) {
        const int columns = PQnfields(raw);
        if (columns == 0) continue;  // rows without columns print nothing, as a command
        if (!began) {
          began = true;
          std::vector<std::string> names;
          for (int c = 0; c < columns; ++c) names.emplace_back(PQfname(raw, c));
          status = sink.columns(names);
        }
        if (status && kind == PGRES_SINGLE_TUPLE) {
          if (filled == batch.size()) batch.emplace_back(static_cast<size_t>(columns));
          std::vector<DbValue>& row = batch[filled++];
          for (int c = 0; c < columns; ++c) {
            const char* value = PQgetvalue(raw, 0, c);
            const auto length = static_cast<size_t>(PQgetlength(raw, 0, c));
            if (PQgetisnull(raw, 0, c))
              row[c].reset();
            else if (row[c])
              row[c]->assign(value, length);  // the string of the batch before reused
            else
              row[c].emplace(value, length);
          }
        }
        if (kind == PGRES_TUPLES_OK || filled == kRowBatch) hand_over();
        if (!status && kind == PGRES_SINGLE_TUPLE) cancel();  // rows still to come: stop them
      } else if (kind != PGRES_COMMAND_OK && kind != PGRES_EMPTY_QUERY) {
        const char* code = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
        const std::string_view state = code ? code : "";
        parse_refused = !began && state == "42601";  // syntax_error
        // protocol_violation: the statement has $N parameters, and none are bound
        status = state == "08P01" ? make_error(ErrorKind::Usage,
                                               "PostgreSQL: ett sql takes no parameters; use literal values")
                                  : result_status(raw);
      }
    }
    if (!parse_refused) return status;
    PgResult result(PQexec(conn, sql.c_str()));
    ETT_TRY(result_status(result.get()));
    if (PQnfields(result.get()) == 0) return {};
    return each_row(result.get(), sink, true);
  }

  Status read_event_parts(int64_t trace_id, const EventColumns& columns, EventPartSink& sink) override {
    return read_postgres_events(m_conn.get(), trace_id, columns, sink);
  }

  Status begin_load() override {
    ETT_TRY(exec("BEGIN"));
    // Two loads of the same trace at once: the second waits here and then finds the first one's row.
    if (Status locked = exec("LOCK TABLE traces IN SHARE ROW EXCLUSIVE MODE"); !locked) {
      PgResult(PQexec(m_conn.get(), "ROLLBACK"));
      return locked;
    }
    // Loads take turns here, so a trace's part table that is not a partition is left over from a load that
    // died between the second connection's commit and the attach: never visible in events, dropped now.
    auto orphans = query(
        "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND "
        "c.relkind "
        "= 'r' AND NOT c.relispartition AND c.relname ~ '^events_t[0-9]+_[0-9]+$'",
        {});
    if (!orphans) {
      PgResult(PQexec(m_conn.get(), "ROLLBACK"));
      return orphans.failure();
    }
    for (const auto& row : orphans->rows)
      if (row[0]) ETT_TRY(exec("DROP TABLE IF EXISTS " + *row[0]));
    return {};
  }

  Status end_load(bool commit) override {
    if (commit) {
      m_staged.clear();
      return exec("COMMIT");
    }
    PgResult(PQexec(m_conn.get(), "ROLLBACK"));
    // A part the second connection committed, never attached: not left behind.
    for (const std::string& table : m_staged)
      PgResult(PQexec(m_conn.get(), ("DROP TABLE IF EXISTS " + table).c_str()));
    m_staged.clear();
    return {};
  }

  Status insert_events(int64_t trace_id, const EventSource& events, uint64_t start_tsc, uint64_t tsc_hz,
                       const LoadProgress& progress) override {
    const EventTiming timing{start_tsc, tsc_hz};
    const uint64_t total = events.size();
    // The trace's events packed as event_packs holds them, written after its events (a reload's old ones
    // deleted first).
    const SqlValue id[] = {trace_id};
    ETT_TRY(query("DELETE FROM event_packs WHERE trace_id = $1", id));
    ETT_TRY_ASSIGN(bool covered, partition_covers(trace_id));
    if (covered || total == 0) {
      // A reload of a trace that has its partitions (or is in events_legacy): through events, whose
      // partitions' indexes are kept up row by row.
      PackFile packs;
      ETT_TRY(copy_events(m_conn.get(), "events", trace_id, events.feed(0, total), timing, false, packs,
                          [&](uint64_t sent) { return !progress || progress(sent, total); }));
      return packs.copy(m_conn.get(), trace_id);
    }
    // A trace of its own: one partition, or two filled at once by two connections (two server processes:
    // the server's per-row work is most of a load) when the trace is big and its seqs rise, each part read
    // from a feed of its own.
    const std::optional<EventSource::Cut> cut = events.middle();
    PgConn second;
    if (cut && total >= kSplitEvents) second = second_connection();
    std::vector<EventPart> parts;
    const std::string name = fmt::format("events_t{}_", trace_id);
    if (!second) {
      parts.push_back({name + "0", 0, total, std::nullopt, std::nullopt});
    } else {
      parts.push_back({name + "0", 0, cut->index, std::nullopt, cut->seq});
      parts.push_back({name + "1", cut->index, total, cut->seq, std::nullopt});
    }
    std::vector<EventFeed> feeds;
    for (const EventPart& part : parts) feeds.push_back(events.feed(part.begin, part.end));
    std::vector<PackFile> packs(parts.size());
    std::atomic<uint64_t> second_sent{0};
    std::atomic<bool> abandon{false};
    Status second_done;
    std::thread helper;
    if (second) {
      m_staged.push_back(parts[1].table);
      helper = std::thread([&] {
        second_done = [&]() -> Status {
          ETT_TRY(pg_exec(second.get(), "BEGIN"));
          ETT_TRY(fill_part(second.get(), trace_id, parts[1], feeds[1], timing, packs[1], false,
                            [&](uint64_t sent) {
                              second_sent.store(sent, std::memory_order_relaxed);
                              return !abandon.load(std::memory_order_relaxed);
                            }));
          return pg_exec(second.get(), "COMMIT");
        }();
        if (!second_done) {
          abandon.store(true, std::memory_order_relaxed);
          PgResult(PQexec(second.get(), "ROLLBACK"));
        }
      });
    }
    Status first_done =
        fill_part(m_conn.get(), trace_id, parts[0], feeds[0], timing, packs[0], true, [&](uint64_t sent) {
          if (abandon.load(std::memory_order_relaxed)) return false;
          if (progress && !progress(sent + second_sent.load(std::memory_order_relaxed), total)) {
            abandon.store(true, std::memory_order_relaxed);
            return false;
          }
          return true;
        });
    if (!first_done) abandon.store(true, std::memory_order_relaxed);
    if (helper.joinable()) helper.join();
    // What stopped one part stopped the other, which then says it was abandoned: the cause comes first.
    for (const Status* done : {&first_done, &second_done})
      if (!*done && done->error().kind != ErrorKind::Interrupted) return *done;
    ETT_TRY(first_done);
    ETT_TRY(second_done);
    for (const EventPart& part : parts)
      ETT_TRY(exec(
          fmt::format("ALTER TABLE events ATTACH PARTITION {} {}", part.table, part_bounds(trace_id, part))));
    for (PackFile& part_packs : packs) ETT_TRY(part_packs.copy(m_conn.get(), trace_id));  // part 1's
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

  PgResult exec_params(const std::string& sql, std::span<const SqlValue> params) {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      bool is_null = false;
      texts[i] = param_text(params[i], is_null);
      values[i] = is_null ? nullptr : texts[i].c_str();
    }
    return PgResult(PQexecParams(m_conn.get(), sql.c_str(), static_cast<int>(params.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0));
  }

  Status result_status(PGresult* result) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
    std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(m_conn.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return make_error(ErrorKind::Usage, "PostgreSQL: " + message);
  }

  // Asks the server to stop the running query (its results are still read to their end).
  void cancel() {
    if (PGcancel* request = PQgetCancel(m_conn.get())) {
      char message[256];
      PQcancel(request, message, sizeof message);
      PQfreeCancel(request);
    }
  }

  // The rows of `result` as text into `sink`, after its column names when `with_columns`.
  static Status each_row(PGresult* result, RowSink& sink, bool with_columns) {
    const int columns = PQnfields(result);
    if (with_columns) {
      std::vector<std::string> names;
      for (int c = 0; c < columns; ++c) names.emplace_back(PQfname(result, c));
      ETT_TRY(sink.columns(names));
    }
    const int rows = PQntuples(result);
    std::vector<std::vector<DbValue>> batch(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      std::vector<DbValue>& row = batch[static_cast<size_t>(r)];
      row.reserve(static_cast<size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result, r, c))
          row.emplace_back(std::nullopt);
        else
          row.emplace_back(std::string(PQgetvalue(result, r, c), PQgetlength(result, r, c)));
      }
    }
    return rows ? sink.rows(batch) : Status{};
  }

  Expected<ResultTable> fetch(PGresult* result) {
    ETT_TRY(result_status(result));
    CollectRows collected;
    ETT_TRY(each_row(result, collected, true));
    return std::move(collected.table);
  }

  // Whether a partition other than events_default already holds trace_id's range: its own (a reload) or
  // events_legacy (a trace loaded before events was partitioned).
  Expected<bool> partition_covers(int64_t trace_id) {
    const SqlValue id[] = {trace_id};
    ETT_TRY_ASSIGN(
        ResultTable found,
        query("SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = "
              "'events'::regclass AND (c.relname ~ ('^events_t' || $1 || '_[0-9]+$') OR (c.relname = "
              "'events_legacy' AND $1::bigint < substring(pg_get_expr(c.relpartbound, c.oid) FROM "
              "'TO \\(''?(-?[0-9]+)')::bigint))",
              id));
    return !found.rows.empty() && found.rows[0][0] && *found.rows[0][0] != "0";
  }

  // A second connection to the same database (nullptr when it cannot be made: then one part, on this one).
  PgConn second_connection() const {
    PgConn second(PQconnectdb(m_uri.c_str()));
    if (!second || PQstatus(second.get()) != CONNECTION_OK) return nullptr;
    PQsetNoticeProcessor(
        second.get(), [](void*, const char*) {}, nullptr);
    if (!pg_exec(second.get(), "SET client_min_messages = warning")) return nullptr;
    return second;
  }

  PgConn m_conn;
  std::string m_uri;
  std::vector<std::string> m_staged;  // part tables the second connection committed in this load
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
  return std::unique_ptr<Database>(new PostgresDatabase(std::move(conn), uri));
}

}  // namespace ett::host
