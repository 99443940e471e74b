// schema.h: the trace database's tables, the same on SQLite and PostgreSQL (README "Trace database").
#pragma once

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

// CREATE TABLE / INDEX statements for an engine, run in order.
std::vector<std::string> schema_statements(DbEngine engine);

// The table of measured precision per trace and coverage (`ett analyze precision` stores, `durations` and the
// report look up), created on first use: CREATE TABLE IF NOT EXISTS analysis_precision.
std::string precision_table_sql(DbEngine engine);

// INSERT INTO traces (...) VALUES ($1, ...) RETURNING trace_id
std::string insert_trace_sql();

// A 64-bit hash of the session header and every decoded event, as 16 hex digits.
std::string content_hash(const format::SessionHeader& header, std::span<const Event> events);

// "01234567-89ab-cdef-0123-456789abcdef"
std::string format_uuid(const uint8_t (&uuid)[16]);

// Every session-header field under its traces-column name (`ett ls --json` prints these too); event_count is
// the header's count, and the load-only columns (content_hash, loaded_at) are left out.
std::vector<std::pair<ColumnDef, SqlValue>> session_fields(const format::DiskLabel& label,
                                                           const SessionSummary& summary);

// The traces row for a decoded session of a disk.
TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary,
                        std::span<const Event> events);

}  // namespace ett::host
