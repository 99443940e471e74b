// schema.cpp: the tables' definitions, the traces row built from a session header, the content hash.
#include "db/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "common/probe_layout.h"
#include "common/tsc_time.h"

namespace ett::host {

namespace f = ett::format;

namespace {

struct TraceSource {
  const f::DiskLabel& label;
  const SessionSummary& summary;
  uint64_t loaded_events;
  const std::string& hash;
};

SqlValue text(const char* chars, size_t max) {
  return std::string(chars, strnlen(chars, max));
}
SqlValue integer(uint64_t value) {
  return static_cast<int64_t>(value);
}
SqlValue utc_time(uint64_t seconds) {
  if (seconds == 0) return std::monostate{};
  std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  if (!gmtime_r(&time, &utc)) return std::monostate{};
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &utc);
  return std::string(buffer);
}

// A length the kernel measured from its check intervals, in ns; NULL when the session recorded none (before
// format version 2) or has no TSC rate.
SqlValue measured_ns(const f::SessionHeader& h, uint64_t ticks) {
  if (h.typical_check_ticks == 0 || h.tsc_hz == 0) return std::monostate{};
  return ticks_to_ns_exact(static_cast<int64_t>(ticks), h.tsc_hz);
}

struct TraceColumn {
  ColumnDef def;
  SqlValue (*value)(const TraceSource&);
};

#define ETT_INT(name, expr)                                             \
  {                                                                     \
    {name, ColumnType::Integer}, [](const TraceSource& s) -> SqlValue { \
      const auto& h = s.summary.header;                                 \
      (void)h;                                                          \
      return expr;                                                      \
    }                                                                   \
  }
#define ETT_TEXT(name, expr)                                         \
  {                                                                  \
    {name, ColumnType::Text}, [](const TraceSource& s) -> SqlValue { \
      const auto& h = s.summary.header;                              \
      (void)h;                                                       \
      return expr;                                                   \
    }                                                                \
  }

// Names are part of the interface (docs/guide/database.md): users' queries use them.
const std::vector<TraceColumn>& columns() {
  static const std::vector<TraceColumn> kColumns = {
      ETT_TEXT("disk_uuid", format_uuid(h.disk_uuid)),
      ETT_INT("session", integer(h.session_number)),
      ETT_TEXT("content_hash", s.hash),
      ETT_TEXT("disk_name", text(s.label.name, sizeof(s.label.name))),
      ETT_TEXT("captured_at", utc_time(h.captured_at_unix)),
      ETT_INT("captured_at_unix", integer(h.captured_at_unix)),
      ETT_TEXT("loaded_at", utc_time(static_cast<uint64_t>(std::time(nullptr)))),
      ETT_INT("tsc_hz", integer(h.tsc_hz)),
      ETT_TEXT("tsc_method", std::string(f::tsc_method_name(h.tsc_method))),
      ETT_INT("tsc_uncertainty_ppm", integer(h.tsc_uncertainty_ppm)),
      ETT_TEXT("layout", std::string(f::layout_name(h.layout))),
      ETT_TEXT("probe_source", std::string(f::probe_source_name(h.probe_source))),
      ETT_INT("probe_address", integer(h.probe_address)),
      ETT_TEXT("mode", std::string(f::mode_name(h.mode))),
      ETT_TEXT("stop_reason", std::string(f::stop_reason_name(h.stop_reason))),
      ETT_INT("event_count", integer(s.loaded_events)),
      ETT_INT("header_event_count", integer(h.event_count)),
      ETT_TEXT("health", std::string(health_name(s.summary.health))),
      ETT_TEXT("status",
               std::string(h.status == static_cast<uint32_t>(f::SessionStatus::Complete) ? "complete"
                                                                                         : "writing")),
      ETT_INT("format_version", integer(h.format_version)),
      ETT_INT("record_size", integer(h.record_size)),
      ETT_INT("chunk_sectors", integer(h.chunk_sectors)),
      ETT_INT("chunk_count", integer(h.chunk_count)),
      ETT_INT("start_lba", integer(h.start_lba)),
      ETT_INT("reserved_sectors", integer(h.reserved_sectors)),
      ETT_INT("flags", integer(h.flags)),
      ETT_INT("invariant_tsc", integer((h.flags & f::kFlagInvariantTsc) ? 1 : 0)),
      ETT_INT("capture_start_tsc", integer(h.capture_start_tsc)),
      ETT_INT("capture_end_tsc", integer(h.capture_end_tsc)),
      ETT_INT("buffer_capacity", integer(h.buffer_capacity)),
      ETT_INT("initial_lines", integer(h.initial_lines)),
      ETT_INT("final_lines", integer(h.final_lines)),
      ETT_INT("trigger_mask", integer(h.trigger_mask)),
      ETT_INT("trigger_match", integer(h.trigger_match)),
      ETT_INT("filter_mask", integer(h.filter_mask)),
      ETT_INT("stop_probe", integer(h.stop_probe)),
      ETT_INT("stop_code", integer(h.stop_code)),
      ETT_INT("limit_ms", integer(h.limit_ms)),
      ETT_INT("pretrigger", integer(h.pretrigger)),
      ETT_INT("hwlat_threshold_ns", integer(h.hwlat_threshold_ns)),
      ETT_INT("armed_tsc", integer(h.armed_tsc)),
      ETT_INT("pretrigger_events", integer(h.pretrigger_events)),
      ETT_INT("loop_iterations", integer(h.loop_iterations)),
      ETT_INT("floor_milliticks", integer(h.floor_milliticks)),
      ETT_INT("smi_count", integer(h.smi_count)),
      ETT_INT("tsc_hz_pit", integer(h.tsc_hz_pit)),
      // Session format 2: the capture's own check intervals and stalls (0 before; the _ns columns NULL).
      ETT_INT("stall_count", integer(h.stall_count)),
      ETT_INT("stall_records", integer(h.stall_records)),
      ETT_INT("longest_check_ticks", integer(h.longest_check_ticks)),
      ETT_INT("typical_check_ticks", integer(h.typical_check_ticks)),
      ETT_INT("stall_threshold_ticks", integer(h.stall_threshold_ticks)),
      ETT_INT("longest_stall_ticks", integer(h.longest_stall_ticks)),
      ETT_INT("longest_stall_ns", measured_ns(h, h.longest_stall_ticks)),
      ETT_INT("longest_check_ns", measured_ns(h, h.longest_check_ticks)),
      ETT_TEXT("cpu_vendor", text(h.cpu_vendor, sizeof(h.cpu_vendor))),
      ETT_TEXT("cpu_brand", text(h.cpu_brand, sizeof(h.cpu_brand))),
      ETT_TEXT("cmdline", text(h.cmdline, sizeof(h.cmdline))),
  };
  return kColumns;
}

#undef ETT_INT
#undef ETT_TEXT

}  // namespace

const std::vector<ColumnDef>& trace_columns() {
  static const std::vector<ColumnDef> kDefs = [] {
    std::vector<ColumnDef> defs;
    for (const TraceColumn& column : columns()) defs.push_back(column.def);
    return defs;
  }();
  return kDefs;
}

namespace {

// The events table at the current version; flags and aux may be NULL only in rows an older ett loaded
// (added by the migration to version 2).
std::string events_table_sql(DbEngine engine) {
  const bool pg = engine == DbEngine::Postgres;
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS events (\n  trace_id {0} NOT NULL,\n  seq {0} NOT NULL,\n"
      "  probe {1} NOT NULL,\n  code {1} NOT NULL,\n  tsc {0} NOT NULL,\n  time_ns {0},\n"
      "  lines {1} NOT NULL,\n  flags {1},\n  aux {0},\n  PRIMARY KEY (trace_id, seq)\n){2}",
      pg ? "BIGINT" : "INTEGER", pg ? "SMALLINT" : "INTEGER",
      // PostgreSQL: each trace's events are partitions of their own, filled and indexed before they are
      // attached (postgres.cpp); rows no partition covers go to events_default.
      pg ? " PARTITION BY RANGE (trace_id, seq)" : " WITHOUT ROWID");
}

// An events table from before partitioning (a plain table) becomes the partition events_legacy, bounded by
// its highest trace_id: a CHECK constraint first (one scan), so that ATTACH does not scan again, and so that
// later traces' partitions need not look at it. Runs inside the caller's transaction.
Status partition_legacy_events(Database& db) {
  ETT_TRY_ASSIGN(ResultTable kind,
                 db.query("SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass('events')", {}));
  if (kind.rows.empty() || !kind.rows[0][0] || *kind.rows[0][0] != "r") return {};
  ETT_TRY(
      db.run_script("ALTER TABLE events RENAME TO events_legacy; ALTER INDEX IF EXISTS events_pkey RENAME TO "
                    "events_legacy_pkey; ALTER INDEX IF EXISTS events_time RENAME TO events_legacy_time"));
  ETT_TRY(db.run_script(events_table_sql(DbEngine::Postgres)));
  ETT_TRY_ASSIGN(ResultTable top, db.query("SELECT coalesce(max(trace_id), 0) + 1 FROM events_legacy", {}));
  const int64_t bound = std::stoll(top.rows.at(0).at(0).value_or("1"));
  ETT_TRY(db.run_script(fmt::format(
      "ALTER TABLE events_legacy ADD CONSTRAINT events_legacy_bound CHECK (trace_id < {0});"
      "ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM (MINVALUE, MINVALUE) TO ({0}, "
      "MINVALUE);"
      // New traces must get ids above the legacy partition's range.
      "SELECT setval(pg_get_serial_sequence('traces', 'trace_id'), {1}) WHERE {1} > (SELECT "
      "coalesce(max(trace_id), 0) FROM traces)",
      bound, bound - 1)));
  return {};
}

// Whether events is still a plain table (made by an ett before partitioning).
Expected<bool> has_legacy_events(Database& db) {
  if (db.engine() != DbEngine::Postgres) return false;
  ETT_TRY_ASSIGN(
      ResultTable kind,
      db.query("SELECT count(*) FROM pg_class WHERE oid = to_regclass('events') AND relkind = 'r'", {}));
  return !kind.rows.empty() && kind.rows[0][0] && *kind.rows[0][0] != "0";
}

// Events per probe and code of each trace, written by the load from the decoded events: what `ett query
// codes` reads. An index that could answer it, (trace_id, probe, code), cost more than the rest of a load put
// together (docs/design/database.md).
std::string event_codes_table_sql(DbEngine engine) {
  const bool pg = engine == DbEngine::Postgres;
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS event_codes (\n  trace_id {0} NOT NULL,\n  probe {1} NOT NULL,\n"
      "  code {1} NOT NULL,\n  events {0} NOT NULL,\n  PRIMARY KEY (trace_id, probe, code)\n){2}",
      pg ? "BIGINT" : "INTEGER", pg ? "SMALLINT" : "INTEGER", pg ? "" : " WITHOUT ROWID");
}

// A trace's events by blocks of seqs (seq >> kEventBlockShift), written by the load: what `window` searches
// (time_ns grows with seq within a trace, but the block's least and greatest time make it exact either way),
// then each block it needs is a range of the events' primary key. Neither engine keeps an index on time_ns:
// kept up during a SQLite load it cost as much CPU as the rest of the insert, and built for each PostgreSQL
// partition it was a third of the server's work (docs/design/database.md).
std::string event_blocks_table_sql(DbEngine engine) {
  const bool pg = engine == DbEngine::Postgres;
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS event_blocks (\n  trace_id {0} NOT NULL,\n  first_seq {0} NOT NULL,\n"
      "  last_seq {0} NOT NULL,\n  min_ns {0},\n  max_ns {0},\n  PRIMARY KEY (trace_id, first_seq)\n){1}",
      pg ? "BIGINT" : "INTEGER", pg ? "" : " WITHOUT ROWID");
}

// Each trace's events again, packed about a thousand to a row (db/event_packs.h), written by the load: what a
// whole-trace read takes (about 8,700 rows for 10 M events: PostgreSQL's binary COPY of them, SQLite's scan
// of them, instead of the rows of events). PostgreSQL stores the data column PLAIN (a pack fits in a page):
// neither compressed nor cut into TOAST chunks, which cost the load and the read a TOAST index entry per
// 2 KB. SQLite keeps them in a table with rowids (a pack inside a leaf of 64 KB, the key in the primary key's
// index): a WITHOUT ROWID table keeps whole rows in its interior pages too, which SQLite advises only for
// rows under a twentieth of a page.
std::string event_packs_table_sql(DbEngine engine) {
  if (engine == DbEngine::Sqlite)
    return "CREATE TABLE IF NOT EXISTS event_packs (\n  trace_id INTEGER NOT NULL,\n  first_seq INTEGER NOT "
           "NULL,\n  last_seq INTEGER NOT NULL,\n  events INTEGER NOT NULL,\n  data BLOB NOT NULL,\n"
           "  PRIMARY KEY (trace_id, first_seq)\n)";
  return "DO $$ BEGIN IF to_regclass('event_packs') IS NULL THEN\n"
         "CREATE TABLE event_packs (\n  trace_id BIGINT NOT NULL,\n  first_seq BIGINT NOT NULL,\n"
         "  last_seq BIGINT NOT NULL,\n  events INTEGER NOT NULL,\n  data BYTEA NOT NULL,\n"
         "  PRIMARY KEY (trace_id, first_seq)\n);\n"
         "ALTER TABLE event_packs ALTER COLUMN data SET STORAGE PLAIN;\n"
         "END IF; END $$";
}

// One step of the migration path: the statements that take a database from `from` to from + 1.
struct Migration {
  int from;
  std::vector<std::string> (*statements)(DbEngine engine);
};

// The tallies of every trace, counted again from its event rows.
constexpr const char* kCountEventCodesSql =
    "INSERT INTO event_codes (trace_id, probe, code, events) SELECT trace_id, probe, code, count(*) FROM "
    "events "
    "GROUP BY trace_id, probe, code";
std::string count_event_blocks_sql() {
  return fmt::format(
      "INSERT INTO event_blocks (trace_id, first_seq, last_seq, min_ns, max_ns) SELECT trace_id, min(seq), "
      "max(seq), min(time_ns), max(time_ns) FROM events GROUP BY trace_id, seq >> {}",
      kEventBlockShift);
}

const Migration kMigrations[] = {
    {1,
     [](DbEngine engine) {
       const bool pg = engine == DbEngine::Postgres;
       std::vector<std::string> out = {
           fmt::format("ALTER TABLE events ADD COLUMN flags {}", pg ? "SMALLINT" : "INTEGER"),
           fmt::format("ALTER TABLE events ADD COLUMN aux {}", pg ? "BIGINT" : "INTEGER"),
       };
       // The old traces' counts, once, from their rows (the table itself comes with schema_statements).
       out.push_back(event_codes_table_sql(engine));
       out.push_back(kCountEventCodesSql);
       return out;
     }},
    {2,
     [](DbEngine engine) {
       std::vector<std::string> out;
       if (engine == DbEngine::Sqlite) out.push_back("DROP INDEX IF EXISTS events_time");
       out.push_back(event_blocks_table_sql(engine));
       out.push_back(count_event_blocks_sql());
       return out;
     }},
    {3,
     [](DbEngine engine) {
       std::vector<std::string> out;
       if (engine == DbEngine::Postgres) out.push_back("DROP INDEX IF EXISTS events_time");
       return out;
     }},
    // 6 -> 7: the losses table, which schema_statements creates.
    {6, [](DbEngine) { return std::vector<std::string>(); }},
};

// 0: a new database (no traces table); 1: made before ett_schema existed; else ett_schema's version.
Expected<int> schema_version(Database& db) {
  ETT_TRY_ASSIGN(bool versioned, has_table(db, "ett_schema"));
  if (versioned) {
    ETT_TRY_ASSIGN(ResultTable table, db.query("SELECT max(version) FROM ett_schema", {}));
    if (!table.rows.empty() && table.rows[0][0]) return std::stoi(*table.rows[0][0]);
  }
  ETT_TRY_ASSIGN(bool has_traces, has_table(db, "traces"));
  return has_traces ? 1 : 0;
}

// As one script: one round trip to a PostgreSQL server, not one per statement.
Status run_all(Database& db, const std::vector<std::string>& statements) {
  std::string script;
  for (const std::string& statement : statements) script += statement + ";\n";
  if (!script.empty()) ETT_TRY(db.run_script(script));
  return {};
}

}  // namespace

std::vector<std::string> schema_statements(DbEngine engine) {
  const bool pg = engine == DbEngine::Postgres;
  std::string traces = pg ? "CREATE TABLE IF NOT EXISTS traces (\n  trace_id BIGINT GENERATED BY DEFAULT AS "
                            "IDENTITY PRIMARY KEY"
                          : "CREATE TABLE IF NOT EXISTS traces (\n  trace_id INTEGER PRIMARY KEY";
  for (const ColumnDef& column : trace_columns()) {
    const bool required = std::strcmp(column.name, "disk_uuid") == 0 ||
                          std::strcmp(column.name, "session") == 0 ||
                          std::strcmp(column.name, "content_hash") == 0;
    traces += fmt::format(",\n  {} {}{}", column.name,
                          column.type == ColumnType::Text ? "TEXT" : (pg ? "BIGINT" : "INTEGER"),
                          required ? " NOT NULL" : "");
  }
  traces += "\n)";
  std::vector<std::string> out = {
      "CREATE TABLE IF NOT EXISTS ett_schema (version INTEGER NOT NULL)",
      traces,
      // The identity of a trace: loading the same session with the same contents again finds this row.
      "CREATE UNIQUE INDEX IF NOT EXISTS traces_identity ON traces (disk_uuid, session, content_hash)",
      events_table_sql(engine),
      event_codes_table_sql(engine),
      event_blocks_table_sql(engine),
      fmt::format("CREATE TABLE IF NOT EXISTS probes (\n  trace_id {} NOT NULL,\n  probe {} NOT NULL,\n"
                  "  label TEXT,\n  PRIMARY KEY (trace_id, probe)\n){}",
                  pg ? "BIGINT" : "INTEGER", pg ? "SMALLINT" : "INTEGER", pg ? "" : " WITHOUT ROWID"),
      // The session's stall table: start_ns from the capture start, as events.time_ns.
      fmt::format(
          "CREATE TABLE IF NOT EXISTS stalls (\n  trace_id {0} NOT NULL,\n  start_ns {0},\n  length_ns {0},\n"
          "  start_tsc {0} NOT NULL,\n  length_ticks {0} NOT NULL,\n  PRIMARY KEY (trace_id, "
          "start_tsc)\n){1}",
          pg ? "BIGINT" : "INTEGER", pg ? "" : " WITHOUT ROWID"),
  };
  if (pg) out.push_back("CREATE TABLE IF NOT EXISTS events_default PARTITION OF events DEFAULT");
  out.push_back(event_packs_table_sql(engine));
  // Seqs a salvaged load (`ett load --salvage`) could not read: a gap there is a loss, not a quiet period.
  out.push_back(fmt::format(
      "CREATE TABLE IF NOT EXISTS losses (\n  trace_id {0} NOT NULL,\n  first_seq {0} NOT NULL,\n  last_seq "
      "{0} "
      "NOT NULL,\n  events {0} NOT NULL,\n  reason TEXT,\n  PRIMARY KEY (trace_id, first_seq)\n){1}",
      pg ? "BIGINT" : "INTEGER", pg ? "" : " WITHOUT ROWID"));
  return out;
}

std::span<const TableNote> table_notes() {
  static constexpr TableNote kNotes[] = {
      {"ett_schema", "The schema's version (one row): what apply_schema migrates from."},
      {"traces",
       "One row per loaded session: its identity, what was loaded, and every session-header field."},
      {"events", "Every event of every trace, keyed by (trace_id, seq): the decoded records with time_ns."},
      {"event_codes",
       "Events per probe and code of each trace, counted by the load: what `ett query codes` reads."},
      {"event_blocks",
       "The seq and time range of each block of 4096 seqs of a trace: what `ett query window` "
       "searches."},
      {"probes", "Probe names of a trace (`ett label`)."},
      {"stalls",
       "The session's stall table: where the capture loop did not poll, so events there may be late."},
      {"events_default", "PostgreSQL: the partition of events rows no trace's own partition covers."},
      {"event_packs",
       "Each trace's events again, packed about a thousand to a row: what whole-trace reads take."},
      {"losses", "Seqs a salvaged load (`ett load --salvage`) could not read: a gap there is a loss."},
      {"analysis_precision",
       "The measured precision per trace and coverage (`ett analyze precision`), created on "
       "first use."},
      {"pps_mapping",
       "A trace's TSC-to-UTC mapping from its PPS line (`ett analyze pps`), created on first use."},
  };
  return kNotes;
}

Expected<bool> has_table(Database& db, const char* name) {
  const SqlValue params[] = {std::string(name)};
  ETT_TRY_ASSIGN(ResultTable table,
                 db.query(db.engine() == DbEngine::Sqlite
                              ? "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = $1"
                              // pg_tables, not information_schema.tables (a view of many joins): as the
                              // first query of a command's connection, 5 ms against 12 ms under strace
                              : "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
                                "current_schema() AND tablename = $1",
                          params));
  return !table.rows.empty() && table.rows[0][0] && *table.rows[0][0] != "0";
}

std::string refresh_derived_sql() {
  return std::string("DELETE FROM event_packs;\nDELETE FROM event_codes;\n") + kCountEventCodesSql +
         ";\nDELETE FROM event_blocks;\n" + count_event_blocks_sql() + ";\n";
}

Status insert_event_blocks(Database& db, int64_t trace_id, const EventTallies& tallies, uint64_t tsc_hz) {
  // Rows go in a few hundred per statement: a 10 M-event trace has about 2,400 blocks.
  constexpr size_t kRowsPerStatement = 256;
  std::vector<SqlValue> params;
  std::string values;
  auto flush = [&]() -> Status {
    if (params.empty()) return {};
    ETT_TRY(db.query(
        "INSERT INTO event_blocks (trace_id, first_seq, last_seq, min_ns, max_ns) VALUES " + values, params));
    params.clear();
    values.clear();
    return {};
  };
  auto time_ns = [&](int64_t ticks) -> SqlValue {
    if (!tsc_hz) return std::monostate{};
    return ticks_to_ns_exact(ticks, tsc_hz);
  };
  for (const EventTallies::Block& block : tallies.blocks()) {
    const size_t n = params.size();
    values += fmt::format("{}(${}, ${}, ${}, ${}, ${})", n ? ", " : "", n + 1, n + 2, n + 3, n + 4, n + 5);
    params.insert(params.end(),
                  {trace_id, static_cast<int64_t>(block.first_seq), static_cast<int64_t>(block.last_seq),
                   time_ns(block.least_ticks), time_ns(block.greatest_ticks)});
    if (params.size() >= kRowsPerStatement * 5) ETT_TRY(flush());
  }
  return flush();
}

Status insert_event_codes(Database& db, int64_t trace_id, const EventTallies& tallies) {
  const std::vector<uint64_t>& counts = tallies.codes();
  for (size_t key = 0; key < counts.size(); ++key) {
    if (!counts[key]) continue;
    const SqlValue row[] = {trace_id, static_cast<int64_t>(key / 256), static_cast<int64_t>(key % 256),
                            static_cast<int64_t>(counts[key])};
    ETT_TRY(db.query("INSERT INTO event_codes (trace_id, probe, code, events) VALUES ($1, $2, $3, $4)", row));
  }
  return {};
}

Status apply_schema(Database& db) {
  ETT_TRY_ASSIGN(int version, schema_version(db));
  if (version > kSchemaVersion)
    return make_error(
        ErrorKind::Usage,
        fmt::format("the database has schema version {}, newer than this ett knows ({}): use the "
                    "ett that made it, or a newer one",
                    version, kSchemaVersion));
  ETT_TRY_ASSIGN(bool legacy_events, has_legacy_events(db));
  if (version == kSchemaVersion && !legacy_events)
    return run_all(db, schema_statements(db.engine()));  // recreates dropped tables
  // Create or migrate in one transaction; the version is read again inside it, in case another process did
  // it meanwhile.
  ETT_TRY(db.run_script(db.engine() == DbEngine::Sqlite ? "BEGIN IMMEDIATE"
                                                        : "BEGIN; SELECT pg_advisory_xact_lock(6648183)"));
  auto body = [&]() -> Status {
    ETT_TRY_ASSIGN(int now, schema_version(db));
    if (now > 0)
      for (const Migration& step : kMigrations)
        if (step.from >= now) ETT_TRY(run_all(db, step.statements(db.engine())));
    if (db.engine() == DbEngine::Postgres) ETT_TRY(partition_legacy_events(db));
    if (now == kSchemaVersion) return run_all(db, schema_statements(db.engine()));
    ETT_TRY(run_all(db, schema_statements(db.engine())));
    ETT_TRY(db.run_script("DELETE FROM ett_schema"));
    ETT_TRY(db.run_script(fmt::format("INSERT INTO ett_schema (version) VALUES ({})", kSchemaVersion)));
    return {};
  };
  if (Status done = body(); !done) {
    (void)db.run_script("ROLLBACK");
    return done;
  }
  ETT_TRY(db.run_script("COMMIT"));
  return {};
}

std::string insert_stall_sql() {
  return "INSERT INTO stalls (trace_id, start_ns, length_ns, start_tsc, length_ticks) VALUES ($1, $2, $3, "
         "$4, $5)";
}

Status add_missing_trace_columns(Database& db) {
  ETT_TRY_ASSIGN(ResultTable existing, db.query("SELECT * FROM traces WHERE 1 = 0", {}));
  const bool pg = db.engine() == DbEngine::Postgres;
  for (const ColumnDef& column : trace_columns()) {
    if (std::find(existing.columns.begin(), existing.columns.end(), column.name) != existing.columns.end())
      continue;
    ETT_TRY(
        db.run_script(fmt::format("ALTER TABLE traces ADD COLUMN {} {}", column.name,
                                  column.type == ColumnType::Text ? "TEXT" : (pg ? "BIGINT" : "INTEGER"))));
  }
  return {};
}

std::string insert_trace_sql(bool with_id) {
  std::string names = with_id ? "trace_id" : "";
  std::string params = with_id ? "$1" : "";
  int n = with_id ? 1 : 0;
  for (const ColumnDef& column : trace_columns()) {
    if (n) {
      names += ", ";
      params += ", ";
    }
    names += column.name;
    params += fmt::format("${}", ++n);
  }
  return fmt::format("INSERT INTO traces ({}) VALUES ({}){}", names, params,
                     with_id ? "" : " RETURNING trace_id");
}

std::string format_uuid(const uint8_t (&uuid)[16]) {
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

std::vector<std::pair<ColumnDef, SqlValue>> session_fields(const format::DiskLabel& label,
                                                           const SessionSummary& summary) {
  const std::string no_hash;
  const TraceSource source{label, summary, summary.header.event_count, no_hash};
  std::vector<std::pair<ColumnDef, SqlValue>> fields;
  for (const TraceColumn& column : columns()) {
    const std::string_view name = column.def.name;
    if (name == "content_hash" || name == "loaded_at") continue;
    fields.emplace_back(column.def, column.value(source));
  }
  return fields;
}

TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary, EventTallies tallies) {
  TraceRow row;
  row.header = summary.header;
  row.disk_uuid = format_uuid(summary.header.disk_uuid);
  row.session = summary.header.session_number;
  row.content_hash = tallies.content_hash();
  const TraceSource source{label, summary, tallies.events(), row.content_hash};
  for (const TraceColumn& column : columns()) row.values.push_back(column.value(source));
  const f::SessionHeader& h = summary.header;
  for (const f::StallRecord& stall : summary.stalls) {
    TraceRow::Stall out;
    out.start_tsc = static_cast<int64_t>(stall.start_tsc);
    out.length_ticks = static_cast<int64_t>(stall.length_ticks);
    if (h.tsc_hz) {
      out.start_ns = ticks_to_ns_exact(static_cast<int64_t>(stall.start_tsc - h.capture_start_tsc), h.tsc_hz);
      out.length_ns = ticks_to_ns_exact(static_cast<int64_t>(stall.length_ticks), h.tsc_hz);
    }
    row.stalls.push_back(out);
  }
  // An unknown layout (a newer kernel): one probes row per probe number seen.
  if (f::layout_bits_per_probe(summary.header.layout) != 0)
    row.probe_count = ProbeLayout(static_cast<f::Layout>(summary.header.layout)).probe_count();
  else
    row.probe_count = tallies.highest_probe();
  row.tallies = std::move(tallies);
  return row;
}

TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary,
                        std::span<const Event> events) {
  EventTallies tallies(summary.header, events.size());
  tallies.add(events);
  return make_trace_row(label, summary, std::move(tallies));
}

std::string precision_table_sql(DbEngine engine) {
  const char* integer = engine == DbEngine::Postgres ? "BIGINT" : "INTEGER";
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS analysis_precision (\n  trace_id {} NOT NULL,\n  coverage DOUBLE PRECISION "
      "NOT "
      "NULL,\n  tau_ns DOUBLE PRECISION NOT NULL,\n  epsilon_ns DOUBLE PRECISION NOT NULL,\n  pi_ns DOUBLE "
      "PRECISION NOT NULL,\n  steps {} NOT NULL,\n  PRIMARY KEY (trace_id, coverage)\n)",
      integer, integer);
}

std::string pps_table_sql(DbEngine engine) {
  const char* integer = engine == DbEngine::Postgres ? "BIGINT" : "INTEGER";
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS pps_mapping (\n  trace_id {0} PRIMARY KEY,\n  line {0} NOT NULL,\n  tsc_hz "
      "DOUBLE "
      "PRECISION NOT NULL,\n  uncertainty_ppb DOUBLE PRECISION NOT NULL,\n  anchor_tsc DOUBLE PRECISION NOT "
      "NULL,\n  utc_second {0},\n  label_source TEXT NOT NULL,\n  pulses {0} NOT NULL,\n  rejected {0} NOT "
      "NULL,\n  "
      "jitter_p99_ns DOUBLE PRECISION NOT NULL\n)",
      integer);
}

}  // namespace ett::host
