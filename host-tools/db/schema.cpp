// schema.cpp: the tables' definitions, the traces row built from a session header, the content hash.
#include "db/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "common/probe_layout.h"

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

// Names are part of the interface (README): users' queries use them.
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
      ETT_TEXT("cpu_vendor", text(h.cpu_vendor, sizeof(h.cpu_vendor))),
      ETT_TEXT("cpu_brand", text(h.cpu_brand, sizeof(h.cpu_brand))),
      ETT_TEXT("cmdline", text(h.cmdline, sizeof(h.cmdline))),
  };
  return kColumns;
}

#undef ETT_INT
#undef ETT_TEXT

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

const std::vector<ColumnDef>& trace_columns() {
  static const std::vector<ColumnDef> kDefs = [] {
    std::vector<ColumnDef> defs;
    for (const TraceColumn& column : columns()) defs.push_back(column.def);
    return defs;
  }();
  return kDefs;
}

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
  const char* small = pg ? "SMALLINT" : "INTEGER";
  const char* big = pg ? "BIGINT" : "INTEGER";
  return {
      traces,
      // The identity of a trace: loading the same session with the same contents again finds this row.
      "CREATE UNIQUE INDEX IF NOT EXISTS traces_identity ON traces (disk_uuid, session, content_hash)",
      fmt::format("CREATE TABLE IF NOT EXISTS events (\n  trace_id {0} NOT NULL,\n  seq {0} NOT NULL,\n"
                  "  probe {1} NOT NULL,\n  code {1} NOT NULL,\n  tsc {0} NOT NULL,\n  time_ns {0},\n"
                  "  lines {1} NOT NULL,\n  PRIMARY KEY (trace_id, seq)\n){2}",
                  big, small, pg ? "" : " WITHOUT ROWID"),
      fmt::format("CREATE TABLE IF NOT EXISTS probes (\n  trace_id {} NOT NULL,\n  probe {} NOT NULL,\n"
                  "  label TEXT,\n  PRIMARY KEY (trace_id, probe)\n){}",
                  big, small, pg ? "" : " WITHOUT ROWID"),
  };
}

std::string insert_trace_sql() {
  std::string names, params;
  int n = 0;
  for (const ColumnDef& column : trace_columns()) {
    if (n) {
      names += ", ";
      params += ", ";
    }
    names += column.name;
    params += fmt::format("${}", ++n);
  }
  return fmt::format("INSERT INTO traces ({}) VALUES ({}) RETURNING trace_id", names, params);
}

std::string content_hash(const format::SessionHeader& header, std::span<const Event> events) {
  uint64_t h = mix(0x6574742d74726163ull ^ events.size());
  const auto* words = reinterpret_cast<const uint8_t*>(&header);
  for (size_t i = 0; i + 8 <= sizeof(header); i += 8) {
    uint64_t word;
    std::memcpy(&word, words + i, 8);
    h = mix(h ^ word) + i;
  }
  for (const Event& event : events) {
    h = mix(h ^ event.seq);
    h = mix(h ^ event.tsc);
    h = mix(h ^ (uint64_t{event.probe} | uint64_t{event.code} << 8 | uint64_t{event.lines} << 16 |
                 uint64_t{event.flags} << 24 | uint64_t{event.aux} << 32));
  }
  return fmt::format("{:016x}", h);
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

TraceRow make_trace_row(const format::DiskLabel& label, const SessionSummary& summary,
                        std::span<const Event> events) {
  TraceRow row;
  row.disk_uuid = format_uuid(summary.header.disk_uuid);
  row.session = summary.header.session_number;
  row.content_hash = content_hash(summary.header, events);
  const TraceSource source{label, summary, events.size(), row.content_hash};
  for (const TraceColumn& column : columns()) row.values.push_back(column.value(source));
  // An unknown layout (a newer kernel): one probes row per probe number seen.
  if (f::layout_bits_per_probe(summary.header.layout) != 0)
    row.probe_count = ProbeLayout(static_cast<f::Layout>(summary.header.layout)).probe_count();
  else
    for (const Event& event : events) row.probe_count = std::max<int>(row.probe_count, event.probe);
  return row;
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

}  // namespace ett::host
