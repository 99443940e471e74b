// captures.cpp: the captures of ett._ett: a session of a trace image (ImageSession) and a trace of the
// database (StoredTrace), their headers, stalls, labels and PPS mapping as Python values, and their events as
// a numpy array that the decoder (or the database read) fills in place.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "analysis/input.h"
#include "common/tsc_time.h"
#include "db/loader.h"
#include "db/schema.h"
#include "image/event_source.h"
#include "image/session_stream.h"
#include "image/trace_image.h"
#include "python_ett.h"

namespace ett::python {

namespace {

using namespace ett::host;

EventRecord record_of(const Event& event, uint64_t start_tsc, uint64_t hz) {
  const double ticks = static_cast<double>(static_cast<int64_t>(event.tsc - start_tsc));
  return {event.seq,   event.tsc,  ticks_to_ns(ticks, hz), event.aux, event.probe, event.code,
          event.lines, event.flags};
}

py::object value_of(const SqlValue& value) {
  if (const auto* number = std::get_if<int64_t>(&value)) return py::int_(*number);
  if (const auto* text = std::get_if<std::string>(&value)) return py::str(*text);
  return py::none();
}

// A row of text values (a query's result) as a dict, numbers as int or float where the text is one.
py::dict row_dict(const std::vector<std::string>& columns, const std::vector<DbValue>& row) {
  py::dict out;
  for (size_t i = 0; i < columns.size() && i < row.size(); ++i) {
    if (!row[i]) {
      out[py::str(columns[i])] = py::none();
      continue;
    }
    const std::string& text = *row[i];
    char* end = nullptr;
    errno = 0;
    const long long integer = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0' && errno == 0) {
      out[py::str(columns[i])] = py::int_(integer);
      continue;
    }
    const double real = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0')
      out[py::str(columns[i])] = py::float_(real);
    else
      out[py::str(columns[i])] = py::str(text);
  }
  return out;
}

py::list table_rows(const ResultTable& table) {
  py::list rows;
  for (const auto& row : table.rows) rows.append(row_dict(table.columns, row));
  return rows;
}

py::list stall_list(std::span<const StallSpan> stalls) {
  py::list out;
  for (const StallSpan& stall : stalls) {
    py::dict row;
    row["start_ns"] = stall.start_ns;
    row["length_ns"] = stall.length_ns;
    out.append(row);
  }
  return out;
}

// One session of a trace image, checked when opened (as `ett extract` checks it): a damaged one is refused
// with extract's message unless salvaged.
class ImageSession {
 public:
  ImageSession(const std::string& path, std::optional<uint32_t> session, bool salvage)
      : m_image(std::make_unique<TraceImage>(take(TraceImage::open(path)))) {
    m_index = take(m_image->find_session(session));
    m_summary = take(m_image->check_session(m_index));
    check(require_usable(path, m_summary, salvage));
    if (!m_image->size_warning().empty()) m_warnings.push_back(m_image->size_warning());
    if (m_summary.health != SessionHealth::Ok)
      m_warnings.push_back(
          fmt::format("session {} is {}", m_summary.header.session_number, m_summary.describe()));
  }

  py::dict header() const {
    py::dict out;
    for (const auto& [column, value] : session_fields(m_image->label(), m_summary))
      out[py::str(column.name)] = value_of(value);
    out["health"] = health_name(m_summary.health);
    out["detail"] = m_summary.describe();
    out["recovered_events"] = m_summary.recovered_events;
    out["lost"] = lost_ranges_text(lost_ranges(m_summary));
    return out;
  }

  py::list stalls() const {
    const auto& h = m_summary.header;
    std::vector<StallSpan> spans;
    for (const format::StallRecord& record : m_summary.stalls)
      spans.push_back(
          {ticks_to_ns(static_cast<double>(static_cast<int64_t>(record.start_tsc - h.capture_start_tsc)),
                       h.tsc_hz),
           ticks_to_ns(static_cast<double>(record.length_ticks), h.tsc_hz)});
    return stall_list(spans);
  }

  // Decoded straight into the array, without the GIL: the events of the good chunks, checked against the
  // count check_session found (the image did not change in between). A whole session (every chunk full but
  // the last) is read as two halves at once, each on a thread of its own into its own part of the array;
  // any other on SessionStream's thread.
  py::array_t<EventRecord> events() const {
    const uint64_t total = m_summary.recovered_events;
    py::array_t<EventRecord> array = event_array(total);
    EventRecord* out = array.mutable_data();
    host::Status status;
    {
      py::gil_scoped_release unlocked;
      const uint64_t half_chunks = m_summary.header.chunk_count / 2;
      const uint64_t first_events = half_chunks * format::kRecordsPerChunk;
      if (m_summary.health == SessionHealth::Ok && half_chunks > 0 && first_events < total) {
        host::Status second;
        std::thread later(
            [&] { second = read_part({half_chunks}, out + first_events, total - first_events); });
        status = read_part({0, half_chunks}, out, first_events);
        later.join();
        if (status) status = second;
      } else {
        status = read_stream(out, total);
      }
    }
    check(status);
    return array;
  }

  const std::vector<std::string>& warnings() const { return m_warnings; }
  uint32_t session() const { return m_summary.header.session_number; }
  std::string path() const { return m_image->path(); }

 private:
  // The good events of `chunks` into out[0, count): an error unless they are exactly `count`.
  host::Status read_part(ChunkRange chunks, EventRecord* out, uint64_t count) const {
    const uint64_t start = m_summary.header.capture_start_tsc;
    const uint64_t hz = m_summary.header.tsc_hz;
    uint64_t filled = 0;
    SessionSummary part;
    const host::Status streamed = m_image->stream_session(
        m_index, part,
        [&](std::span<const Event> events) {
          if (filled + events.size() > count) {
            filled += events.size();
            return false;
          }
          for (const Event& event : events) out[filled++] = record_of(event, start, hz);
          return true;
        },
        chunks);
    if (filled != count && (streamed || filled > count)) return changed(filled, count);
    return streamed;
  }

  // All of the session's good events, decoded on SessionStream's thread.
  host::Status read_stream(EventRecord* out, uint64_t total) const {
    const uint64_t start = m_summary.header.capture_start_tsc;
    const uint64_t hz = m_summary.header.tsc_hz;
    const EventFeed feed = checked_feed(std::make_shared<SessionStream>(*m_image, m_index), total,
                                        m_image->path(), m_summary.header.session_number);
    uint64_t filled = 0;
    for (;;) {
      ETT_TRY_ASSIGN(const std::span<const Event> block, feed());
      if (block.empty()) return {};
      if (filled + block.size() > total) return changed(filled + block.size(), total);
      for (const Event& event : block) out[filled++] = record_of(event, start, hz);
    }
  }

  host::Status changed(uint64_t found, uint64_t expected) const {
    return session_changed(m_image->path(), m_summary.header.session_number, found, expected);
  }

  std::unique_ptr<TraceImage> m_image;
  size_t m_index = 0;
  SessionSummary m_summary;
  std::vector<std::string> m_warnings;
};

// Every session of an image, as `ett ls` lists them: its header fields and what checking it found.
py::list image_sessions(const std::string& path) {
  const TraceImage image = take(TraceImage::open(path));
  py::list out;
  for (size_t i = 0; i < image.sessions().size(); ++i) {
    SessionSummary summary = take(image.check_session(i));
    py::dict row;
    for (const auto& [column, value] : session_fields(image.label(), summary))
      row[py::str(column.name)] = value_of(value);
    row["health"] = health_name(summary.health);
    row["detail"] = summary.describe();
    out.append(row);
  }
  return out;
}

}  // namespace

StoredTrace::StoredTrace(const std::string& url, std::optional<int64_t> trace) {
  LoadedTrace head = take(open_trace_head(url, trace));
  m_db = std::move(head.db);
  m_capture = std::move(head.capture);
}

py::dict StoredTrace::info() const {
  const CaptureInfo& i = m_capture.info;
  py::dict out;
  out["trace_id"] = i.trace_id;
  out["name"] = i.name;
  out["tsc_hz"] = i.tsc_hz;
  out["capture_start_tsc"] = i.capture_start_tsc;
  out["capture_end_tsc"] = i.capture_end_tsc;
  out["end_ns"] = i.end_ns();
  out["mode"] = i.mode;
  out["layout"] = i.layout;
  out["probe_count"] = i.probe_count;
  out["captured_at"] = i.captured_at;
  out["cpu_brand"] = i.cpu_brand;
  out["stall_count"] = i.stall_count;
  return out;
}

py::dict StoredTrace::header() const {
  const SqlValue params[] = {m_capture.info.trace_id};
  const ResultTable rows = take(m_db->query("SELECT * FROM traces WHERE trace_id = $1", params));
  return rows.rows.empty() ? py::dict() : row_dict(rows.columns, rows.rows[0]);
}

py::list StoredTrace::stalls() const {
  return stall_list(m_capture.stalls);
}

py::dict StoredTrace::labels() const {
  const SqlValue params[] = {m_capture.info.trace_id};
  const ResultTable rows =
      take(m_db->query("SELECT probe, label FROM probes WHERE trace_id = $1 ORDER BY probe", params));
  py::dict out;
  for (const auto& row : rows.rows)
    if (row[0])
      out[py::int_(std::atoi(row[0]->c_str()))] = row[1] ? py::object(py::str(*row[1])) : py::none();
  return out;
}

py::object StoredTrace::pps_mapping() const {
  const std::optional<PpsResult> found = take(find_pps(*m_db, m_capture.info.trace_id));
  if (!found) return py::none();
  py::dict out;
  out["line"] = found->line;
  out["tsc_hz"] = found->tsc_hz;
  out["uncertainty_ppb"] = found->uncertainty_ppb;
  out["anchor_tsc"] = found->anchor_tsc;
  out["utc_second"] = found->utc_second ? py::object(py::int_(*found->utc_second)) : py::none();
  out["label_source"] = found->label_source;
  out["jitter_p99_ns"] = found->jitter_p99_ns;
  return out;
}

// Read as the analyses read them (stream_trace_events: time_ns from the TSC at the trace's rate), into a
// vector that becomes the array's memory (no copy). The database's rows have no aux and flags for this read:
// both are 0.
py::array_t<EventRecord> StoredTrace::events() const {
  auto records = std::make_unique<std::vector<EventRecord>>();
  host::Status status;
  {
    py::gil_scoped_release unlocked;
    std::vector<EventRecord>& into = *records;
    auto sink = [&](std::span<const AnalysisEvent> events) -> host::Status {
      for (const AnalysisEvent& e : events)
        into.push_back({e.seq, e.tsc, e.time_ns, 0, e.probe, e.code, e.lines, 0});
      return {};
    };
    auto restart = [&]() -> host::Status {
      into.clear();
      return {};
    };
    status = stream_trace_events(*m_db, m_capture, sink, restart);
  }
  check(status);
  std::vector<EventRecord>* held = records.release();
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<EventRecord>*>(p); });
  return py::array_t<EventRecord>({static_cast<py::ssize_t>(held->size())}, held->data(), owner);
}

py::array_t<EventRecord> event_array(size_t count) {
  return py::array_t<EventRecord>({static_cast<py::ssize_t>(count)});
}

void bind_captures(py::module_& m) {
  PYBIND11_NUMPY_DTYPE(EventRecord, seq, tsc, time_ns, probe, code, aux, flags, lines);
  m.attr("EVENT_DTYPE") = py::dtype::of<EventRecord>();

  py::class_<ImageSession>(m, "ImageSession")
      .def(py::init<const std::string&, std::optional<uint32_t>, bool>(), py::arg("path"),
           py::arg("session") = py::none(), py::arg("salvage") = false)
      .def("header", &ImageSession::header)
      .def("stalls", &ImageSession::stalls)
      .def("events", &ImageSession::events)
      .def_property_readonly("warnings", &ImageSession::warnings)
      .def_property_readonly("session", &ImageSession::session)
      .def_property_readonly("path", &ImageSession::path);
  m.def("image_sessions", &image_sessions, py::arg("path"));

  py::class_<StoredTrace>(m, "StoredTrace")
      .def(py::init<const std::string&, std::optional<int64_t>>(), py::arg("url"),
           py::arg("trace") = py::none())
      .def("info", &StoredTrace::info)
      .def("header", &StoredTrace::header)
      .def("stalls", &StoredTrace::stalls)
      .def("labels", &StoredTrace::labels)
      .def("pps_mapping", &StoredTrace::pps_mapping)
      .def("events", &StoredTrace::events)
      .def_property_readonly("trace_id", [](const StoredTrace& t) { return t.capture().info.trace_id; });

  m.def(
      "traces",
      [](const std::string& url) {
        auto db = take(open_database(url));
        return table_rows(take(db->query(
            "SELECT trace_id, disk_uuid, session, event_count, mode, layout, captured_at FROM traces "
            "ORDER BY trace_id",
            {})));
      },
      py::arg("url"));
  m.def(
      "load",
      [](const std::string& image, const std::string& url, std::optional<uint32_t> session, bool all,
         bool salvage) {
        LoadRequest request{image, session, all, salvage};
        std::optional<Expected<std::vector<LoadedSession>>> result;
        {
          py::gil_scoped_release unlocked;
          result.emplace(load_into(url, request));
        }
        const std::vector<LoadedSession> loaded = take(std::move(*result));
        py::list out;
        for (const LoadedSession& s : loaded) {
          py::dict row;
          row["session"] = s.session;
          row["trace_id"] = s.trace_id;
          row["events"] = s.events;
          row["already_loaded"] = s.already_loaded;
          row["health"] = s.health;
          row["skipped"] = s.skipped;
          row["lost"] = s.lost;
          out.append(row);
        }
        return out;
      },
      py::arg("image"), py::arg("url"), py::arg("session") = py::none(), py::arg("all") = false,
      py::arg("salvage") = false);
}

}  // namespace ett::python
