// schema.h: the trace database's tables, the same on SQLite and PostgreSQL (docs/guide/database.md).
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "db/database.h"
#include "image/trace_image.h"

namespace ett::host {

enum class ColumnType { Integer, Text };

struct ColumnDef {
  const char* name;
  ColumnType type;
};

// The columns of `traces` after trace_id: identity, what was loaded, then every session-header field.
const std::vector<ColumnDef>& trace_columns();

// The schema's version, kept in the one-row table ett_schema (docs/guide/database.md):
//   1  traces, events (trace_id, seq, probe, code, tsc, time_ns, lines), probes; no ett_schema table
//   2  events gains flags and aux (every field of the record); the events_time index; event_codes (events per
//      probe and code, written by the load); ett_schema
//   3  event_blocks (the time range of every 4096 seqs, written by the load), which `window` searches; SQLite
//      drops events_time (kept up during a load it cost as much as the rest of the insert), PostgreSQL keeps
//      it
//   4  PostgreSQL drops events_time too (built for each trace's partitions, it was a third of a load's
//      server work): neither engine has a secondary events index
//   5  PostgreSQL: event_packs (each trace's events packed about a thousand to a row, written by the load),
//      which whole-trace reads take; a trace loaded before it has none and is read from events
//   6  SQLite: event_packs too, the same way
// A newer version adds a step to the migrations in schema.cpp and bumps this.
inline constexpr int kSchemaVersion = 7;

// CREATE TABLE / INDEX statements of the current schema for an engine, run in order (IF NOT EXISTS).
std::vector<std::string> schema_statements(DbEngine engine);

// The trace's rows of event_blocks, from its tallies: per block of seqs, the first and last seq present and
// the least and greatest time_ns (NULL without a TSC rate).
Status insert_event_blocks(Database& db, int64_t trace_id, const EventTallies& tallies, uint64_t tsc_hz);
// Whether the database has table `name` (through the catalog: a missing table is no failed statement, which
// would abort a PostgreSQL transaction).
Expected<bool> has_table(Database& db, const char* name);
// After rows of events changed (`ett sql --write`): the packed copy dropped (reads then take the events rows)
// and the tallies counted again from the rows, so that no reader sees the old events.
std::string refresh_derived_sql();
// The trace's rows of event_codes, from its tallies.
Status insert_event_codes(Database& db, int64_t trace_id, const EventTallies& tallies);

// Brings the database to kSchemaVersion: creates what is missing, migrates an older schema in one
// transaction, and refuses (with a message saying so) a database made by a newer ett.
Status apply_schema(Database& db);

// The table of measured precision per trace and coverage (`ett analyze precision` stores, `durations` and the
// report look up), created on first use: CREATE TABLE IF NOT EXISTS analysis_precision.
std::string precision_table_sql(DbEngine engine);

// The UTC mapping of a trace from its PPS line (`ett analyze pps`), created on first use: CREATE TABLE IF NOT
// EXISTS pps_mapping. UTC(tsc) = utc_second + (tsc - anchor_tsc) / tsc_hz.
std::string pps_table_sql(DbEngine engine);

// INSERT INTO traces (...) VALUES ($1, ...) RETURNING trace_id; with_id: INSERT INTO traces (trace_id, ...)
// VALUES ($1, $2, ...), the id the first value.
std::string insert_trace_sql(bool with_id = false);

// INSERT INTO stalls (trace_id, start_ns, length_ns, start_tsc, length_ticks) VALUES ($1, ...)
std::string insert_stall_sql();

// A database made before traces had all of trace_columns() (session format 2's check intervals) gets the
// missing ones (ALTER TABLE ... ADD COLUMN; its older traces read NULL there), so that it keeps loading and
// reading.
Status add_missing_trace_columns(Database& db);

// What each table of the schema holds, one line each, for docs/reference/schema.md (ett-reference checks that
// every table the DDL above creates has one).
struct TableNote {
  const char* table;
  const char* note;
};
std::span<const TableNote> table_notes();

// "01234567-89ab-cdef-0123-456789abcdef"
std::string format_uuid(const uint8_t (&uuid)[16]);

// Every session-header field under its traces-column name (`ett ls --json` prints these too); event_count is
// the header's count, and the load-only columns (content_hash, loaded_at) are left out.
std::vector<std::pair<ColumnDef, SqlValue>> session_fields(const format::DiskLabel& label,
                                                           const SessionSummary& summary);

// The traces row for a decoded session of a disk, from the tallies of its events.
TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary, EventTallies tallies);
// The same from its events.
TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary,
                        std::span<const Event> events);

}  // namespace ett::host
