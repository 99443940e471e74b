// queries.cpp: the project's prepared queries. $1 is the trace; the others follow in usage order.
#include "db/queries.h"

#include <fmt/format.h>

#include <charconv>

namespace ett::host {

const std::vector<NamedQuery>& named_queries() {
  static const std::vector<NamedQuery> kQueries = {
      {"traces",
       "every loaded trace, newest last",
       {},
       false,
       "SELECT trace_id, disk_uuid, session, captured_at, event_count, health, layout, probe_source, "
       "stop_reason, tsc_hz, loaded_at FROM traces ORDER BY trace_id"},
      {"event",
       "one event with its probe's label and its trace (the SCI packet viewer's query)",
       {"SEQ"},
       true,
       "SELECT e.trace_id, e.seq, e.probe, p.label, e.code, e.lines, e.tsc, e.time_ns, t.disk_uuid, "
       "t.session, "
       "t.captured_at, t.tsc_hz FROM events e JOIN traces t ON t.trace_id = e.trace_id "
       "LEFT JOIN probes p ON p.trace_id = e.trace_id AND p.probe = e.probe "
       "WHERE e.trace_id = $1 AND e.seq = $2"},
      {"window",
       "events with FROM_NS <= time_ns <= TO_NS (ns from the start of the capture, or ISO-8601 UTC times "
       "through the trace's PPS mapping)",
       {"FROM_NS", "TO_NS"},
       true,
       // The blocks of seqs whose time range meets the window (event_blocks, a few thousand rows per 10 M
       // events), then each one's range of the events' primary key: no index on time_ns to keep up during a
       // load. Blocks are disjoint and ascending, so (first_seq, seq) is seq order without a sort.
       "SELECT e.seq, e.probe, p.label, e.code, e.tsc, e.time_ns FROM event_blocks b "
       "JOIN events e ON e.trace_id = b.trace_id AND e.seq BETWEEN b.first_seq AND b.last_seq "
       "LEFT JOIN probes p ON p.trace_id = e.trace_id AND p.probe = e.probe "
       "WHERE b.trace_id = $1 AND b.max_ns >= $2 AND b.min_ns <= $3 AND e.time_ns BETWEEN $2 AND $3 "
       "ORDER BY b.first_seq, e.seq"},
      {"probe",
       "every event of one probe",
       {"PROBE"},
       true,
       "SELECT seq, probe, code, tsc, time_ns FROM events WHERE trace_id = $1 AND probe = $2 ORDER BY seq"},
      {"codes",
       "how many events each probe's codes have",
       {},
       true,
       // Counted by the load (event_codes), so no scan of the trace's events.
       "SELECT c.probe, p.label, c.code, c.events FROM event_codes c "
       "LEFT JOIN probes p ON p.trace_id = c.trace_id AND p.probe = c.probe "
       "WHERE c.trace_id = $1 ORDER BY c.probe, c.code"},
      {"probes",
       "the probes of a trace and their labels",
       {},
       true,
       "SELECT probe, label FROM probes WHERE trace_id = $1 ORDER BY probe"},
      {"losses",
       "the seqs a salvaged load (ett load --salvage) could not read",
       {},
       true,
       "SELECT first_seq, last_seq, events, reason FROM losses WHERE trace_id = $1 ORDER BY first_seq"},
  };
  return kQueries;
}

const NamedQuery* find_named_query(std::string_view name) {
  for (const NamedQuery& query : named_queries())
    if (name == query.name) return &query;
  return nullptr;
}

Status run_named_query(Database& db, const NamedQuery& query, int64_t trace,
                       std::span<const std::string> args, RowSink& sink) {
  if (args.size() != query.params.size()) {
    std::string usage = query.name;
    for (const char* param : query.params) usage += std::string(" ") + param;
    return make_error(ErrorKind::Usage,
                      fmt::format("query {} takes {} value{}: ett query {}", query.name, query.params.size(),
                                  query.params.size() == 1 ? "" : "s", usage));
  }
  std::vector<SqlValue> params;
  if (query.takes_trace) params.emplace_back(trace);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    int64_t number = 0;
    const auto parsed = std::from_chars(arg.data(), arg.data() + arg.size(), number);
    if (parsed.ec != std::errc{} || parsed.ptr != arg.data() + arg.size())
      return make_error(ErrorKind::Usage,
                        fmt::format("{} must be an integer, not '{}'", query.params[i], arg));
    params.emplace_back(number);
  }
  return db.query_rows(query.sql, params, sink);
}

Expected<ResultTable> run_named_query(Database& db, const NamedQuery& query, int64_t trace,
                                      std::span<const std::string> args) {
  CollectRows rows;
  ETT_TRY(run_named_query(db, query, trace, args, rows));
  return std::move(rows.table);
}

}  // namespace ett::host
