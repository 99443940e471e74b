// database.cpp: picks the engine from a database URL; what both engines share.
#include "db/database.h"

#include <fmt/format.h>

#include <cstdlib>

#include "db/postgres.h"
#include "db/schema.h"
#include "db/sqlite.h"

namespace ett::host {

std::string default_db_url() {
  const char* env = std::getenv("ETT_DB");
  return env && *env ? env : kDefaultDbUrl;
}

Expected<DbUrl> parse_db_url(const std::string& url) {
  if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    if (path.rfind("//", 0) == 0) path = path.substr(2);  // sqlite:///abs/path and sqlite://rel/path
    if (path.empty()) return make_error(ErrorKind::Usage, "--db sqlite: needs a file, e.g. sqlite:traces.db");
    return DbUrl{DbEngine::Sqlite, path};
  }
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0)
    return DbUrl{DbEngine::Postgres, url};
  return make_error(ErrorKind::Usage,
                    "--db '" + url + "': expected sqlite:FILE or postgresql://[user@]host[:port]/dbname");
}

Expected<std::unique_ptr<Database>> open_database(const std::string& url) {
  ETT_TRY_ASSIGN(DbUrl parsed, parse_db_url(url));
  ETT_TRY_ASSIGN(std::unique_ptr<Database> db, parsed.engine == DbEngine::Sqlite
                                                   ? open_sqlite_database(parsed.target)
                                                   : open_postgres_database(parsed.target));
  ETT_TRY(db->ensure_schema());
  ETT_TRY(add_missing_trace_columns(*db));
  return db;
}

Expected<std::optional<LoadOutcome>> Database::in_load(const LoadBody& body) {
  ETT_TRY(begin_load());
  Expected<std::optional<LoadOutcome>> outcome = body();
  if (!outcome || !*outcome) {
    (void)end_load(false);
    return outcome;
  }
  ETT_TRY(end_load(true));
  return outcome;
}

Status Database::insert_trace_contents(int64_t trace_id, const TraceRow& trace, uint64_t tsc_hz) {
  for (int p = 1; p <= trace.probe_count; ++p) {
    const SqlValue probe[] = {trace_id, int64_t{p}};
    ETT_TRY(query("INSERT INTO probes (trace_id, probe) VALUES ($1, $2) ON CONFLICT DO NOTHING", probe));
  }
  ETT_TRY(insert_event_codes(*this, trace_id, trace.tallies));
  ETT_TRY(insert_event_blocks(*this, trace_id, trace.tallies, tsc_hz));
  for (const TraceRow::Stall& stall : trace.stalls) {
    const SqlValue stall_params[] = {trace_id, stall.start_ns, stall.length_ns, stall.start_tsc,
                                     stall.length_ticks};
    ETT_TRY(query(insert_stall_sql(), stall_params));
  }
  return {};
}

Expected<LoadOutcome> Database::load_trace(const TraceRow& trace, const EventSource& events,
                                           uint64_t capture_start_tsc, uint64_t tsc_hz,
                                           const LoadProgress& progress) {
  // The rest of a trace after its traces row: events, then the rest.
  auto insert_contents = [&](int64_t trace_id) -> Status {
    ETT_TRY(insert_events(trace_id, events, capture_start_tsc, tsc_hz, progress));
    if (progress && !progress(events.size(), events.size()))
      return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
    return insert_trace_contents(trace_id, trace, tsc_hz);
  };
  ETT_TRY_ASSIGN(
      std::optional<LoadOutcome> loaded, in_load([&]() -> Expected<std::optional<LoadOutcome>> {
        const SqlValue identity[] = {trace.disk_uuid, int64_t{trace.session}, trace.content_hash};
        ETT_TRY_ASSIGN(
            ResultTable found,
            query("SELECT trace_id FROM traces WHERE disk_uuid = $1 AND session = $2 AND content_hash = $3",
                  identity));
        if (!found.rows.empty() && found.rows[0][0]) {
          const int64_t trace_id = std::stoll(*found.rows[0][0]);
          ETT_TRY_ASSIGN(std::string wrong, check_events(trace_id, trace, events.size()));
          if (!wrong.empty()) {
            const SqlValue id[] = {trace_id};
            ETT_TRY(query("DELETE FROM events WHERE trace_id = $1", id));
            ETT_TRY(query("DELETE FROM event_codes WHERE trace_id = $1", id));
            ETT_TRY(query("DELETE FROM event_blocks WHERE trace_id = $1", id));
            ETT_TRY(query("DELETE FROM stalls WHERE trace_id = $1", id));
            ETT_TRY(insert_contents(trace_id));
          }
          return std::optional(LoadOutcome{trace_id, true, wrong});
        }
        ETT_TRY_ASSIGN(ResultTable inserted, query(insert_trace_sql(), trace.values));
        if (inserted.rows.empty() || !inserted.rows[0][0])
          return make_error(ErrorKind::Io, "INSERT INTO traces returned no trace_id");
        const int64_t trace_id = std::stoll(*inserted.rows[0][0]);
        ETT_TRY(insert_contents(trace_id));
        return std::optional(LoadOutcome{trace_id, false, {}});
      }));
  if (!loaded)
    return make_error(ErrorKind::Io, "the load ended without an outcome");  // the body always has one
  return std::move(*loaded);
}

Expected<std::optional<LoadOutcome>> Database::load_fed_trace(const format::SessionHeader& header,
                                                              uint64_t expected_events, const EventFeed& feed,
                                                              const FedTraceRow& finish,
                                                              const LoadProgress& progress) {
  if (!takes_event_feed()) return std::optional<LoadOutcome>();
  return in_load([&]() -> Expected<std::optional<LoadOutcome>> {
    const SqlValue disk_session[] = {format_uuid(header.disk_uuid), int64_t{header.session_number}};
    ETT_TRY_ASSIGN(ResultTable found,
                   query("SELECT 1 FROM traces WHERE disk_uuid = $1 AND session = $2 LIMIT 1", disk_session));
    if (!found.rows.empty()) return std::optional<LoadOutcome>();
    ETT_TRY_ASSIGN(const int64_t trace_id, next_trace_id());
    ETT_TRY(insert_event_feed(trace_id, feed, expected_events, header.capture_start_tsc, header.tsc_hz,
                              progress));
    ETT_TRY_ASSIGN(TraceRow trace, finish());
    if (progress && !progress(trace.tallies.events(), trace.tallies.events()))
      return make_error(ErrorKind::Interrupted, "load abandoned; nothing of it was kept");
    std::vector<SqlValue> values{trace_id};
    values.insert(values.end(), trace.values.begin(), trace.values.end());
    ETT_TRY(query(insert_trace_sql(true), values));
    ETT_TRY(insert_trace_contents(trace_id, trace, header.tsc_hz));
    return std::optional(LoadOutcome{trace_id, false, {}});
  });
}

Expected<int64_t> Database::next_trace_id() {
  return make_error(ErrorKind::Usage, "this database gives trace ids only as it inserts traces rows");
}

Status Database::insert_event_feed(int64_t, const EventFeed&, uint64_t, uint64_t, uint64_t,
                                   const LoadProgress&) {
  return make_error(ErrorKind::Usage, "this database takes a load's events whole, not from a feed");
}

Expected<std::string> Database::check_events(int64_t trace_id, const TraceRow& trace, uint64_t expected) {
  const SqlValue id[] = {trace_id};
  ETT_TRY_ASSIGN(ResultTable counted, query("SELECT count(*) FROM events WHERE trace_id = $1", id));
  const uint64_t rows = counted.rows.empty() || !counted.rows[0][0] ? 0 : std::stoull(*counted.rows[0][0]);
  if (rows != expected) return fmt::format("it has {} of its {} events", rows, expected);
  ETT_TRY_ASSIGN(ResultTable codes, query("SELECT sum(events) FROM event_codes WHERE trace_id = $1", id));
  const uint64_t in_codes = codes.rows.empty() || !codes.rows[0][0] ? 0 : std::stoull(*codes.rows[0][0]);
  if (in_codes != expected)
    return fmt::format("its event_codes count {} of its {} events", in_codes, expected);
  ContentHasher hasher(trace.header, rows);
  uint64_t incomplete = 0;
  uint64_t blocks = 0;  // seq blocks present, counted as the rows come in seq order
  uint64_t last_block = 0;
  ETT_TRY(scan_events(trace_id, [&](const StoredEvent& stored) {
    hasher.add(stored.event);
    incomplete += stored.complete ? 0 : 1;
    const uint64_t block = stored.event.seq >> kEventBlockShift;
    if (blocks == 0 || block != last_block) ++blocks;
    last_block = block;
  }));
  if (incomplete)
    return fmt::format("{} of its events have no flags and aux (loaded by an older ett)", incomplete);
  if (hasher.hex() != trace.content_hash)
    return fmt::format("its events differ from the disk's (content hash {}, not {})", hasher.hex(),
                       trace.content_hash);
  ETT_TRY_ASSIGN(ResultTable block_rows, query("SELECT count(*) FROM event_blocks WHERE trace_id = $1", id));
  const uint64_t stored_blocks =
      block_rows.rows.empty() || !block_rows.rows[0][0] ? 0 : std::stoull(*block_rows.rows[0][0]);
  if (stored_blocks != blocks)
    return fmt::format("its event_blocks has {} of its {} blocks", stored_blocks, blocks);
  // The packs hold as many events as the load wrote: a trace loaded before event_packs (schema version 5 on
  // PostgreSQL, 6 on SQLite) has none, and loading it again writes them.
  ETT_TRY_ASSIGN(ResultTable packed,
                 query("SELECT coalesce(sum(events), 0) FROM event_packs WHERE trace_id = $1", id));
  const uint64_t in_packs = packed.rows.empty() || !packed.rows[0][0] ? 0 : std::stoull(*packed.rows[0][0]);
  if (in_packs != expected)
    return fmt::format("its event_packs hold {} of its {} events", in_packs, expected);
  return std::string();
}

Expected<int64_t> latest_trace(Database& db) {
  ETT_TRY_ASSIGN(ResultTable table, db.query("SELECT max(trace_id) FROM traces", {}));
  if (table.rows.empty() || !table.rows[0][0])
    return make_error(ErrorKind::Usage, "the database holds no traces yet: load one with ett load IMAGE");
  return static_cast<int64_t>(std::stoll(*table.rows[0][0]));
}

}  // namespace ett::host
