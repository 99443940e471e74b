// input.cpp: the analyses' reads from (and the precision table in) the trace database.
#include "analysis/input.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <exception>

#include "common/huge_pages.h"
#include "common/line_names.h"
#include "common/probe_layout.h"
#include "common/resources.h"
#include "common/tsc_time.h"
#include "db/schema.h"
#include "db/tallies.h"

namespace ett::host {

namespace {

template <typename T>
bool parse(const DbValue& value, T& out) {
  if (!value) return false;
  const std::string& text = *value;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

int64_t as_int(const DbValue& value) {
  int64_t out = 0;
  if (parse(value, out)) return out;
  double real = 0;  // SQLite may hand back an integer stored in a REAL column as "5.0"
  return parse(value, real) ? static_cast<int64_t>(real) : 0;
}

double as_double(const DbValue& value) {
  double out = 0;
  return parse(value, out) ? out : 0;
}

std::string as_text(const DbValue& value) {
  return value ? *value : std::string();
}

}  // namespace

namespace {

std::function<void(const std::string&)>& loss_notice() {
  static std::function<void(const std::string&)>& notice = *new std::function<void(const std::string&)>;
  return notice;
}

// The losses of a salvaged trace, told once per trace. A database made before the losses table has none.
void tell_losses(Database& db, int64_t trace_id) {
  if (!loss_notice()) return;
  const SqlValue params[] = {trace_id};
  auto rows = db.query(
      "SELECT first_seq, last_seq, events FROM losses WHERE trace_id = $1 ORDER BY first_seq", params);
  if (!rows || rows->rows.empty()) return;
  std::string ranges;
  int64_t events = 0;
  for (const auto& row : rows->rows) {
    ranges += fmt::format("{}{}-{}", ranges.empty() ? "" : ", ", row[0].value_or("?"), row[1].value_or("?"));
    events += row[2] ? std::atoll(row[2]->c_str()) : 0;
  }
  loss_notice()(
      fmt::format("trace {} was loaded with --salvage and lost {} events (seqs {}): a gap there is a "
                  "loss, not a quiet period",
                  trace_id, events, ranges));
}

}  // namespace

void set_loss_notice(std::function<void(const std::string&)> notice) {
  loss_notice() = std::move(notice);
}

Expected<int64_t> resolve_trace(Database& db, std::optional<int64_t> trace) {
  if (!trace) {
    ETT_TRY_ASSIGN(const int64_t latest, latest_trace(db));
    tell_losses(db, latest);
    return latest;
  }
  const SqlValue params[] = {*trace};
  auto rows = db.query("SELECT trace_id FROM traces WHERE trace_id = $1", params);
  if (!rows) return rows.failure();
  if (rows->rows.empty())
    return make_error(ErrorKind::Usage, fmt::format("no trace {} in the database", *trace));
  tell_losses(db, *trace);
  return *trace;
}

namespace {

// The traces row of `trace_id` as a CaptureInfo, and its events count (a hint for the events' array).
Expected<std::pair<CaptureInfo, int64_t>> read_capture_info(Database& db, int64_t trace_id) {
  const SqlValue params[] = {trace_id};
  auto info_rows = db.query(
      "SELECT tsc_hz, capture_start_tsc, capture_end_tsc, mode, layout, initial_lines, captured_at, "
      "cpu_brand, disk_name, session, stall_count, loop_iterations, longest_check_ticks, "
      "typical_check_ticks, stall_threshold_ticks, captured_at_unix, event_count, probe_source FROM traces "
      "WHERE trace_id = $1",
      params);
  if (!info_rows) return info_rows.failure();
  if (info_rows->rows.empty())
    return make_error(ErrorKind::Usage, fmt::format("no trace {} in the database", trace_id));
  const auto& row = info_rows->rows[0];
  CaptureInfo info;
  info.trace_id = trace_id;
  info.tsc_hz = static_cast<uint64_t>(as_int(row[0]));
  info.capture_start_tsc = static_cast<uint64_t>(as_int(row[1]));
  info.capture_end_tsc = static_cast<uint64_t>(as_int(row[2]));
  info.mode = as_text(row[3]);
  info.layout = as_text(row[4]);
  info.probe_count = probes_in_layout(info.layout);
  info.probe_source = probe_source_from_name(as_text(row[17]));
  info.initial_lines = static_cast<uint8_t>(as_int(row[5]));
  info.captured_at = as_text(row[6]);
  info.cpu_brand = as_text(row[7]);
  info.captured_at_unix = static_cast<uint64_t>(as_int(row[15]));
  const std::string disk = as_text(row[8]);
  info.name = disk.empty() ? fmt::format("trace {} (session {})", trace_id, as_text(row[9]))
                           : fmt::format("trace {} ({} session {})", trace_id, disk, as_text(row[9]));
  info.stall_count = static_cast<uint64_t>(as_int(row[10]));
  info.loop_iterations = static_cast<uint64_t>(as_int(row[11]));
  auto ticks_ns = [&](const DbValue& ticks) {
    return ticks_to_ns(static_cast<double>(as_int(ticks)), info.tsc_hz);
  };
  info.longest_check_ns = ticks_ns(row[12]);
  info.typical_check_ns = ticks_ns(row[13]);
  info.stall_threshold_ns = ticks_ns(row[14]);
  return std::pair<CaptureInfo, int64_t>{std::move(info), as_int(row[16])};
}

}  // namespace

Expected<CaptureInfo> load_capture_info(Database& db, int64_t trace_id) {
  ETT_TRY_ASSIGN(auto read, read_capture_info(db, trace_id));
  return std::move(read.first);
}

namespace {

// Rows as analysis events: time_ns from the TSC (sub-ns, a double) when the trace has a TSC rate, else the
// loader's integer column.
void convert_rows(std::span<const EventRow> rows, uint64_t start_tsc, uint64_t tsc_hz, AnalysisEvent* out) {
  for (const EventRow& stored : rows) {
    AnalysisEvent& event = *out++;
    event.seq = stored.seq;
    event.probe = stored.probe;
    event.code = stored.code;
    event.tsc = stored.tsc;
    event.lines = stored.lines;
    if (tsc_hz)
      event.time_ns = ticks_to_ns(static_cast<double>(static_cast<int64_t>(event.tsc - start_tsc)), tsc_hz);
    else
      event.time_ns = static_cast<double>(stored.time_ns);
  }
}

// `rows` converted into `batch` (kEventBatchRows events) a batch at a time, each batch handed to `sink`.
Status convert_in_batches(std::span<const EventRow> rows, const CaptureInfo& info,
                          std::vector<AnalysisEvent>& batch, const EventSink& sink) {
  for (size_t begin = 0; begin < rows.size(); begin += batch.size()) {
    const size_t count = std::min(batch.size(), rows.size() - begin);
    convert_rows(rows.subspan(begin, count), info.capture_start_tsc, info.tsc_hz, batch.data());
    ETT_TRY(sink({batch.data(), count}));
  }
  return {};
}

// Places the parts of a read into the capture's events: each part from the index its first seq has when
// the seqs of the trace are dense (as loads make them), so that the parts need no buffers of their own.
// Should a part have fewer rows than its seq range (gaps), finish() closes the gaps; when the seq range is
// far bigger than the event count the array is not sized by it, and the parts are read into buffers.
class EventPlacer final : public EventPartSink {
 public:
  EventPlacer(std::vector<AnalysisEvent>& events, int64_t count_hint, uint64_t start_tsc, uint64_t tsc_hz)
      : m_events(events), m_count_hint(count_hint), m_start_tsc(start_tsc), m_tsc_hz(tsc_hz) {}

  Status begin(std::span<const SeqRange> parts) override {
    m_parts.assign(parts.size(), {});
    int64_t span = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      m_parts[i].base = span;
      m_parts[i].size = parts[i].last - parts[i].first + 1;
      span += m_parts[i].size;
    }
    // Sized by the seq range when it is about the event count (dense seqs), else buffered per part.
    // The count is the trace's stored one: within this run's memory budget only (under RLIMIT_AS a larger
    // vector fails at once, where the buffers grow with the rows really read).
    m_placed = span <= std::max<int64_t>(2 * m_count_hint, int64_t{1} << 16) && span <= (int64_t{1} << 28) &&
               static_cast<uint64_t>(span) * sizeof(AnalysisEvent) <= memory_budget_bytes();
    if (m_placed) {
      // Its pages are faulted in on two threads before the zeroing writes every event: the kernel's zeroing
      // of fresh pages was the resize's cost.
      m_events = faulted_in_vector<AnalysisEvent>(static_cast<size_t>(span));
    }
    return {};
  }

  Status take(size_t part, std::span<const EventRow> rows) override {
    Part& p = m_parts[part];
    if (!m_placed) {
      const size_t at = p.buffer.size();
      p.buffer.resize(at + rows.size());
      convert_rows(rows, m_start_tsc, m_tsc_hz, p.buffer.data() + at);
      p.count += static_cast<int64_t>(rows.size());
      return {};
    }
    // Seqs are unique and in the part's range, so a part never has more rows than its range has seqs.
    if (p.count + static_cast<int64_t>(rows.size()) > p.size)
      return make_error(ErrorKind::Io, "reading events: more rows than seqs in their range");
    convert_rows(rows, m_start_tsc, m_tsc_hz, m_events.data() + p.base + p.count);
    p.count += static_cast<int64_t>(rows.size());
    return {};
  }

  Status restart(size_t part) override {
    m_parts[part].count = 0;
    m_parts[part].buffer.clear();
    return {};
  }

  // The parts after each other, without gaps.
  void finish() {
    if (!m_placed) {
      size_t total = 0;
      for (const Part& p : m_parts) total += p.buffer.size();
      m_events.clear();
      m_events.reserve(total);
      for (Part& p : m_parts) {
        m_events.insert(m_events.end(), p.buffer.begin(), p.buffer.end());
        p.buffer = {};
      }
      return;
    }
    int64_t end = 0;
    for (const Part& p : m_parts) {
      if (p.base != end)
        std::move(m_events.begin() + p.base, m_events.begin() + p.base + p.count, m_events.begin() + end);
      end += p.count;
    }
    m_events.resize(static_cast<size_t>(end));
  }

 private:
  struct Part {
    int64_t base = 0;   // where the part's rows go
    int64_t size = 0;   // seqs in its range: room for this many rows
    int64_t count = 0;  // rows taken
    std::vector<AnalysisEvent> buffer;
  };

  std::vector<AnalysisEvent>& m_events;
  int64_t m_count_hint;
  uint64_t m_start_tsc, m_tsc_hz;
  bool m_placed = false;
  std::vector<Part> m_parts;
};

}  // namespace

namespace {

// The traces row and the stall table of a trace, without its events; and the events count of its traces row
// (a hint for the events' memory).
Expected<std::pair<Capture, int64_t>> load_capture_head(Database& db, int64_t trace_id) {
  const SqlValue params[] = {trace_id};
  Capture capture;
  ETT_TRY_ASSIGN(auto traces_row, read_capture_info(db, trace_id));
  capture.info = std::move(traces_row.first);
  const CaptureInfo& info = capture.info;
  auto ticks_ns = [&](const DbValue& ticks) {
    return ticks_to_ns(static_cast<double>(as_int(ticks)), info.tsc_hz);
  };

  // The stall table, in ns from the capture start computed from the TSC like the events' times below.
  auto stalls = db.query(
      "SELECT start_tsc, length_ticks, start_ns, length_ns FROM stalls WHERE trace_id = $1 "
      "ORDER BY start_tsc",
      params);
  if (!stalls) return stalls.failure();
  for (const auto& s : stalls->rows) {
    StallSpan stall;
    if (info.tsc_hz) {
      const auto start_tsc = static_cast<uint64_t>(as_int(s[0]));
      stall.start_ns = ticks_to_ns(
          static_cast<double>(static_cast<int64_t>(start_tsc - info.capture_start_tsc)), info.tsc_hz);
      stall.length_ns = ticks_ns(s[1]);
    } else {
      stall.start_ns = as_double(s[2]);
      stall.length_ns = as_double(s[3]);
    }
    capture.stalls.push_back(stall);
  }
  return std::pair<Capture, int64_t>{std::move(capture), traces_row.second};
}

// The events in batches, converted (stream_trace_events); `restart` as Database::read_events'. Returns how
// many were read.
Expected<size_t> read_converted(Database& db, const CaptureInfo& info, const EventSink& sink,
                                const StreamRestart& restart = {}) {
  std::vector<AnalysisEvent> batch(kEventBatchRows);
  size_t events = 0;
  auto take = [&](std::span<const EventRow> rows) -> Status {
    ETT_TRY(convert_in_batches(rows, info, batch, sink));
    events += rows.size();
    return {};
  };
  auto again = [&]() -> Status {
    events = 0;
    return restart();
  };
  EventColumns columns;
  columns.time_ns = info.tsc_hz == 0;
  ETT_TRY(db.read_events(info.trace_id, take, columns, restart ? StreamRestart(again) : StreamRestart()));
  return events;
}

}  // namespace

Expected<std::vector<CodeCount>> code_counts(Database& db, int64_t trace_id) {
  const SqlValue params[] = {trace_id};
  ETT_TRY_ASSIGN(auto rows,
                 db.query("SELECT probe, code, events FROM event_codes WHERE trace_id = $1", params));
  std::vector<CodeCount> counts;
  for (const auto& row : rows.rows)
    counts.push_back({row[0] ? std::atoi(row[0]->c_str()) : 0, row[1] ? std::atoi(row[1]->c_str()) : 0,
                      row[2] ? std::strtoull(row[2]->c_str(), nullptr, 10) : 0});
  return counts;
}

Status no_events(const CaptureInfo& info) {
  return make_error(ErrorKind::Usage,
                    fmt::format("{} has no events: nothing to analyse or export", info.name));
}

Status require_events(Database& db, const CaptureInfo& info) {
  const SqlValue trace[] = {info.trace_id};
  ETT_TRY_ASSIGN(const ResultTable table,
                 db.query("SELECT 1 FROM events WHERE trace_id = $1 LIMIT 1", trace));
  return table.rows.empty() ? no_events(info) : Status{};
}

Expected<Capture> load_capture(Database& db, int64_t trace_id) {
  ETT_TRY_ASSIGN(auto head, load_capture_head(db, trace_id));
  Capture& capture = head.first;
  const CaptureInfo& info = capture.info;

  // Typed, read as parts at once (db/event_reader.h), each part converted and placed where it belongs by its
  // own thread: 32 bytes per event in memory, no part held elsewhere. time_ns is read only when the trace has
  // no TSC rate to compute it from.
  EventPlacer placer(capture.events, head.second, info.capture_start_tsc, info.tsc_hz);
  EventColumns columns;
  columns.time_ns = info.tsc_hz == 0;
  auto read = db.read_event_parts(trace_id, columns, placer);
  if (read) placer.finish();
  if (!read) return read.failure();
  return std::move(capture);
}

namespace {

Status replace_precision(Database& db, int64_t trace_id, const PrecisionResult& result) {
  const SqlValue id[] = {trace_id};
  auto removed = db.query("DELETE FROM analysis_precision WHERE trace_id = $1", id);
  if (!removed) return removed.failure();
  for (const CoverageLevel& level : result.levels) {
    // Doubles travel as text (17 significant digits round-trip exactly); both engines convert on insert.
    const SqlValue params[] = {trace_id,
                               fmt::format("{:.17g}", level.coverage),
                               fmt::format("{:.17g}", level.tau_ns),
                               fmt::format("{:.17g}", level.epsilon_ns),
                               fmt::format("{:.17g}", level.pi_ns),
                               static_cast<int64_t>(result.steps)};
    auto inserted = db.query(
        "INSERT INTO analysis_precision (trace_id, coverage, tau_ns, epsilon_ns, pi_ns, steps) VALUES ($1, "
        "CAST($2 AS DOUBLE PRECISION), CAST($3 AS DOUBLE PRECISION), CAST($4 AS DOUBLE PRECISION), "
        "CAST($5 AS DOUBLE PRECISION), $6)",
        params);
    if (!inserted) return inserted.failure();
  }
  return {};
}

}  // namespace

Status store_precision(Database& db, int64_t trace_id, const PrecisionResult& result) {
  auto created = db.run_script(precision_table_sql(db.engine()));
  if (!created) return created.failure();
  // One transaction: a failed insert must not leave the trace's earlier result deleted.
  auto begun = db.run_script("BEGIN");
  if (!begun) return begun.failure();
  auto replaced = replace_precision(db, trace_id, result);
  auto ended = db.run_script(replaced ? "COMMIT" : "ROLLBACK");
  if (!replaced) return replaced;
  return ended ? Status{} : Status{ended.failure()};
}

Expected<std::optional<StoredPrecision>> find_precision(Database& db, int64_t trace_id, double coverage) {
  // A read: a database where nothing was stored yet has no table, and is not written to make one.
  if (auto has = has_table(db, "analysis_precision"); !has || !*has) return std::optional<StoredPrecision>{};
  const SqlValue params[] = {trace_id, fmt::format("{:.17g}", coverage)};
  auto rows = db.query(
      "SELECT p.trace_id, p.coverage, p.tau_ns, p.epsilon_ns, p.pi_ns FROM analysis_precision p "
      "JOIN traces c ON c.trace_id = p.trace_id JOIN traces t ON t.trace_id = $1 "
      "WHERE c.cpu_brand IS NOT DISTINCT FROM t.cpu_brand AND c.cpu_vendor IS NOT DISTINCT FROM t.cpu_vendor "
      "AND abs(p.coverage - CAST($2 AS DOUBLE PRECISION)) < 1e-9 ORDER BY p.trace_id DESC LIMIT 1",
      params);
  if (!rows) return rows.failure();
  if (rows->rows.empty()) return std::optional<StoredPrecision>{};
  const auto& r = rows->rows[0];
  return std::optional<StoredPrecision>{
      StoredPrecision{as_int(r[0]), as_double(r[1]), as_double(r[2]), as_double(r[3]), as_double(r[4])}};
}

Status store_pps(Database& db, int64_t trace_id, const PpsResult& result) {
  ETT_TRY(db.run_script(pps_table_sql(db.engine())));
  ETT_TRY(db.run_script("BEGIN"));
  const SqlValue id[] = {trace_id};
  auto removed = db.query("DELETE FROM pps_mapping WHERE trace_id = $1", id);
  Status stored = removed ? Status{} : Status{removed.failure()};
  if (stored) {
    const SqlValue params[] = {trace_id,
                               static_cast<int64_t>(result.line),
                               fmt::format("{:.17g}", result.tsc_hz),
                               fmt::format("{:.17g}", result.uncertainty_ppb),
                               fmt::format("{:.17g}", result.anchor_tsc),
                               result.utc_second ? SqlValue{*result.utc_second} : SqlValue{},
                               result.label_source,
                               static_cast<int64_t>(result.pulses.size()),
                               static_cast<int64_t>(result.rejected.size()),
                               fmt::format("{:.17g}", result.jitter_p99_ns)};
    auto inserted = db.query(
        "INSERT INTO pps_mapping (trace_id, line, tsc_hz, uncertainty_ppb, anchor_tsc, utc_second, "
        "label_source, "
        "pulses, rejected, jitter_p99_ns) VALUES ($1, $2, CAST($3 AS DOUBLE PRECISION), CAST($4 AS DOUBLE "
        "PRECISION), CAST($5 AS DOUBLE PRECISION), $6, $7, $8, $9, CAST($10 AS DOUBLE PRECISION))",
        params);
    if (!inserted) stored = inserted.failure();
  }
  ETT_TRY(db.run_script(stored ? "COMMIT" : "ROLLBACK"));
  return stored;
}

Expected<std::optional<PpsResult>> find_pps(Database& db, int64_t trace_id) {
  if (auto has = has_table(db, "pps_mapping"); !has || !*has) return std::optional<PpsResult>{};
  const SqlValue params[] = {trace_id};
  ETT_TRY_ASSIGN(auto rows,
                 db.query("SELECT line, tsc_hz, uncertainty_ppb, anchor_tsc, utc_second, label_source, "
                          "jitter_p99_ns FROM pps_mapping WHERE trace_id = $1",
                          params));
  if (rows.rows.empty()) return std::optional<PpsResult>{};
  const auto& r = rows.rows[0];
  PpsResult mapping;
  mapping.line = static_cast<int>(as_int(r[0]));
  mapping.tsc_hz = as_double(r[1]);
  mapping.uncertainty_ppb = as_double(r[2]);
  mapping.anchor_tsc = as_double(r[3]);
  if (r[4]) mapping.utc_second = as_int(r[4]);
  mapping.label_source = as_text(r[5]);
  mapping.jitter_p99_ns = as_double(r[6]);
  return std::optional<PpsResult>{std::move(mapping)};
}

namespace {

// Counts each part of a read on its thread into the part's own counter (stored_histogram).
class PartCounters final : public EventPartSink {
 public:
  PartCounters(const CaptureInfo& info, const HistogramSpec& spec, const std::optional<TritPattern>& filter)
      : m_info(info), m_fresh(spec, filter) {}
  Status begin(std::span<const SeqRange> parts) override {
    m_parts.assign(parts.size(), Part{m_fresh, std::vector<AnalysisEvent>(kEventBatchRows), 0});
    return {};
  }
  Status take(size_t part, std::span<const EventRow> rows) override {
    Part& p = m_parts[part];
    p.events += rows.size();
    return convert_in_batches(rows, m_info, p.batch, [&](std::span<const AnalysisEvent> events) {
      p.counter.add(events);
      return Status{};
    });
  }
  Status restart(size_t part) override {
    m_parts[part].counter = m_fresh;
    m_parts[part].events = 0;
    return {};
  }
  uint64_t events() const {
    uint64_t total = 0;
    for (const Part& p : m_parts) total += p.events;
    return total;
  }
  HistogramResult result() const {
    HistogramCounter all = m_fresh;
    for (const Part& p : m_parts) all.merge(p.counter);
    return all.result();
  }

 private:
  struct Part {
    HistogramCounter counter;
    std::vector<AnalysisEvent> batch;
    uint64_t events;
  };
  const CaptureInfo& m_info;
  const HistogramCounter m_fresh;
  std::vector<Part> m_parts;
};

}  // namespace

Expected<HistogramResult> stored_histogram(Database& db, const CaptureInfo& info, const HistogramSpec& spec,
                                           const std::optional<TritPattern>& filter) {
  if (!filter && spec.key != HistogramKey::Time) {
    // What the load counted (event_codes), when it counted anything and every tally has a probe and a code.
    ETT_TRY_ASSIGN(const std::vector<CodeCount> tallies, code_counts(db, info.trace_id));
    auto in_range = [](const CodeCount& c) {
      return c.probe >= 0 && c.probe < 256 && c.code >= 0 && c.code < 256;
    };
    if (!tallies.empty() && std::all_of(tallies.begin(), tallies.end(), in_range)) {
      HistogramCounter counter(spec, filter);
      for (const CodeCount& c : tallies)
        counter.add_tally(static_cast<uint8_t>(c.probe), static_cast<uint8_t>(c.code), c.events);
      HistogramResult counted = counter.result();
      if (counted.total > 0) return counted;
    }
  }
  PartCounters counters(info, spec, filter);
  EventColumns columns;
  columns.time_ns = info.tsc_hz == 0;
  ETT_TRY(db.read_event_parts(info.trace_id, columns, counters));
  if (counters.events() == 0) return no_events(info).failure();
  return counters.result();
}

namespace {
// An action held (Action) and its duration copied for the quantiles.
constexpr uint64_t kBytesPerHeldAction = sizeof(Action) + sizeof(double);
}  // namespace

Expected<DurationsResult> stored_actions(Database& db, int64_t trace_id, const Endpoint& from,
                                         const Endpoint& to, PairRule rule, std::optional<double> pi_override,
                                         size_t* events_read) {
  ETT_TRY(resolve_trace(db, trace_id));
  ETT_TRY_ASSIGN(auto head, load_capture_head(db, trace_id));
  const Capture& capture = head.first;
  const CaptureInfo& info = capture.info;
  ETT_TRY(check_endpoints(info, from, to));
  ETT_TRY_ASSIGN(QuotedPi pi, resolve_pi(db, trace_id, pi_override));
  // Every action is held (its row is printed after the summary, and the quantiles need them all): refused
  // before the read when the actions the start events can open would not fit.
  ETT_TRY_ASSIGN(const std::vector<CodeCount> counts, code_counts(db, trace_id));
  uint64_t starts = 0;
  for (const CodeCount& count : counts)
    if (count.probe == from.probe && (!from.code || count.code == *from.code)) starts += count.events;
  ETT_TRY(check_memory(starts * kBytesPerHeldAction,
                       fmt::format("holding every action of trace {}, from {} start events of --from {}",
                                   trace_id, starts, endpoint_text(from))));
  // Room for the most there can be (an action takes a start and an end; a start is an event), as address
  // space: pages are touched as they fill, by a thread of their own a window ahead of the pairing (the
  // reading thread is the critical path, and the other core idles once the later parts of the read are
  // held). Not for a count hint too big to reserve.
  const auto count_hint = static_cast<size_t>(std::max<int64_t>(head.second, 0));
  constexpr size_t kReserveLimit = size_t{1} << 32;
  std::optional<ActionPairer> pairer;
  std::optional<StallMarks::Builder> stalls;
  auto start = [&]() -> Status {
    ETT_TRY_ASSIGN(ActionPairer made, ActionPairer::make(from, to, rule));
    pairer.emplace(std::move(made));
    // The hint is the trace's stored count: a reservation beyond this run's memory budget would fail under
    // RLIMIT_AS; the vectors then grow as they fill.
    if (count_hint / 2 <= kReserveLimit / sizeof(Action) &&
        count_hint / 2 * sizeof(Action) <= memory_budget_bytes() / 2) {
      pairer->reserve(count_hint, count_hint / 2);
      pairer->fault_in_ahead();
    }
    stalls.emplace(capture.stalls);
    return {};
  };
  ETT_TRY(start());

  // Paired as they are read: the first part of the read as it comes, the later ones held until their turn
  // (Database::read_events); the events themselves are never all in memory. Should the first part's rows come
  // out of seq order, the pairing starts again (`start`) as the part is read again in order.
  auto take = [&](std::span<const AnalysisEvent> events) -> Status {
    for (const AnalysisEvent& event : events) stalls->add(event);
    pairer->add(events);
    return {};
  };
  ETT_TRY_ASSIGN(const size_t events, read_converted(db, info, take, start));
  if (events_read) *events_read = events;
  ETT_TRY_ASSIGN(DurationsResult paired, std::move(*pairer).finish(pi.pi_ns));
  paired.pi_trace_id = pi.trace_id;
  mark_stalls(paired, std::move(*stalls).finish(), info.stall_count);
  return paired;
}

Expected<DurationsResult> trace_actions(Database& db, const CaptureInfo& info, const Endpoint& from,
                                        const Endpoint& to, PairRule rule,
                                        std::optional<double> pi_override) {
  size_t events = 0;
  ETT_TRY_ASSIGN(DurationsResult paired,
                 stored_actions(db, info.trace_id, from, to, rule, pi_override, &events));
  if (events == 0) return no_events(info).failure();
  return paired;
}

Status check_endpoint(const CaptureInfo& info, const Endpoint& endpoint, std::string_view option) {
  if (info.probe_count <= 0) return {};  // unknown layout: nothing to check against
  if (endpoint.probe > info.probe_count)
    return make_error(ErrorKind::Usage,
                      fmt::format("{} {}: trace {} has layout {}: probes 1-{}", option,
                                  endpoint_text(endpoint), info.trace_id, info.layout, info.probe_count));
  const unsigned max_code = ProbeLayout::from_name(info.layout)->max_code();
  if (endpoint.code && *endpoint.code > max_code)
    return make_error(ErrorKind::Usage, fmt::format("{} {}: a probe of layout {} has codes 0-{}", option,
                                                    endpoint_text(endpoint), info.layout, max_code));
  return {};
}

Status check_endpoints(const CaptureInfo& info, const Endpoint& from, const Endpoint& to) {
  auto checked = check_endpoint(info, from, "--from");
  return checked ? check_endpoint(info, to, "--to") : checked;
}

Expected<LoadedTrace> open_trace(const std::string& db_url, std::optional<int64_t> trace) {
  auto db = open_database(db_url);
  if (!db) return db.failure();
  auto id = resolve_trace(**db, trace);
  if (!id) return id.failure();
  auto capture = load_capture(**db, *id);
  if (!capture) return capture.failure();
  if (capture->events.empty()) return no_events(capture->info).failure();
  return LoadedTrace{std::move(*db), std::move(*capture)};
}

Expected<LoadedTrace> open_trace_head(const std::string& db_url, std::optional<int64_t> trace) {
  ETT_TRY_ASSIGN(std::unique_ptr<Database> db, open_database(db_url));
  ETT_TRY_ASSIGN(const int64_t id, resolve_trace(*db, trace));
  ETT_TRY_ASSIGN(auto head, load_capture_head(*db, id));
  return LoadedTrace{std::move(db), std::move(head.first)};
}

Status stream_trace_events(Database& db, const Capture& capture, const EventSink& sink,
                           const StreamRestart& restart) {
  ETT_TRY_ASSIGN(const size_t events, read_converted(db, capture.info, sink, restart));
  if (events == 0) return no_events(capture.info);
  return {};
}

Expected<double> earliest_event_ns(Database& db, const CaptureInfo& info) {
  // The first column of each row, as integers (NULL is none).
  auto integers = [&db](const std::string& sql,
                        std::span<const SqlValue> params) -> Expected<std::vector<int64_t>> {
    ETT_TRY_ASSIGN(const ResultTable table, db.query(sql, params));
    std::vector<int64_t> values;
    for (const auto& row : table.rows)
      if (row[0]) values.push_back(as_int(row[0]));
    return values;
  };
  const SqlValue trace[] = {info.trace_id};
  if (info.tsc_hz == 0) {
    // The loader's column, NULL read as 0 (convert_rows).
    ETT_TRY_ASSIGN(const auto least,
                   integers("SELECT min(coalesce(time_ns, 0)) FROM events WHERE trace_id = $1", trace));
    return least.empty() ? 0.0 : static_cast<double>(least[0]);
  }
  ETT_TRY_ASSIGN(const auto blocks,
                 integers("SELECT first_seq FROM event_blocks WHERE trace_id = $1 AND min_ns = (SELECT "
                          "min(min_ns) FROM event_blocks WHERE trace_id = $1)",
                          trace));
  std::vector<int64_t> least;
  if (blocks.empty()) {
    ETT_TRY_ASSIGN(least, integers("SELECT min(tsc) FROM events WHERE trace_id = $1", trace));
  }
  for (const int64_t first_seq : blocks) {
    const SqlValue range[] = {info.trace_id, first_seq, first_seq | ((int64_t{1} << kEventBlockShift) - 1)};
    ETT_TRY_ASSIGN(
        const auto block,
        integers("SELECT min(tsc) FROM events WHERE trace_id = $1 AND seq BETWEEN $2 AND $3", range));
    if (!block.empty() && (least.empty() || block[0] < least[0])) least = block;
  }
  if (least.empty()) return 0.0;
  const uint64_t tsc = static_cast<uint64_t>(least[0]);
  return ticks_to_ns(static_cast<double>(static_cast<int64_t>(tsc - info.capture_start_tsc)), info.tsc_hz);
}

Expected<std::optional<EventTimeSpan>> first_and_last_event_ns(Database& db, const CaptureInfo& info) {
  const SqlValue trace[] = {info.trace_id};
  // The event at one end of the trace, converted as a read converts it.
  auto end_event = [&](const char* order) -> Expected<std::optional<AnalysisEvent>> {
    ETT_TRY_ASSIGN(const ResultTable table,
                   db.query(fmt::format("SELECT tsc, time_ns FROM events WHERE trace_id = $1 ORDER BY seq {} "
                                        "LIMIT 1",
                                        order),
                            trace));
    if (table.rows.empty()) return std::optional<AnalysisEvent>();
    const auto& row = table.rows[0];
    EventRow stored;
    stored.tsc = static_cast<uint64_t>(as_int(row[0]));
    stored.has_time_ns = row[1].has_value();
    if (row[1]) stored.time_ns = as_int(row[1]);
    AnalysisEvent event;
    convert_rows({&stored, 1}, info.capture_start_tsc, info.tsc_hz, &event);
    return std::optional(event);
  };
  ETT_TRY_ASSIGN(const auto first, end_event("ASC"));
  ETT_TRY_ASSIGN(const auto last, end_event("DESC"));
  if (!first || !last) return std::optional<EventTimeSpan>();
  return std::optional(EventTimeSpan{first->time_ns, last->time_ns});
}

Expected<PrecisionResult> stored_precision(Database& db, const Capture& head,
                                           const PrecisionOptions& options) {
  const CaptureInfo& info = head.info;
  if (info.mode != "calibrate" || info.tsc_hz == 0) {
    ETT_TRY(require_events(db, info));
    return analyze_precision(head, options);  // no event needed
  }
  // The steps of loop_steps_ns, from each event and the one before it in seq order (across batches),
  // counted by value as they come.
  LoopSteps steps(info.tsc_hz);
  auto take = [&](std::span<const AnalysisEvent> events) -> Status {
    for (const AnalysisEvent& event : events) steps.add(event.tsc);
    return {};
  };
  auto restart = [&]() -> Status {
    steps.clear();
    return {};
  };
  ETT_TRY(stream_trace_events(db, head, take, restart));
  ValueCounts counted = std::move(steps).take();
  return precision_from_steps(counted, info.tsc_hz, info.probe_count, options);
}

Expected<IntervalsResult> stored_intervals(Database& db, const Capture& head, double tau_ns) {
  std::optional<IntervalsBuilder> builder;
  auto start = [&]() -> Status {
    builder.emplace(tau_ns, head.stalls);
    return {};
  };
  ETT_TRY(start());
  auto take = [&](std::span<const AnalysisEvent> events) -> Status {
    builder->add(events);
    return {};
  };
  ETT_TRY(stream_trace_events(db, head, take, start));
  // The second pass: the values of the buckets that hold each probe's quantiles, and the spread.
  builder->start_second();
  auto take_again = [&](std::span<const AnalysisEvent> events) -> Status {
    builder->add_second(events);
    return {};
  };
  auto restart_again = [&]() -> Status {
    builder->start_second();
    return {};
  };
  ETT_TRY(stream_trace_events(db, head, take_again, restart_again));
  return std::move(*builder).finish(head.info.stall_count);
}

Expected<QuotedPi> resolve_pi(Database& db, int64_t trace_id, std::optional<double> override_ns) {
  if (override_ns) return QuotedPi{*override_ns, 0};
  auto stored = find_precision(db, trace_id);
  if (!stored) return stored.failure();
  return *stored ? QuotedPi{(*stored)->pi_ns, (*stored)->trace_id} : QuotedPi{};
}

}  // namespace ett::host
