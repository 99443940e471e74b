// perfetto.cpp: writes the Chrome trace-event JSON format (timestamps in microseconds).
#include "export/perfetto.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <utility>

#include "common/decimals.h"
#include "common/row_cursor.h"
#include "common/tsc_time.h"
#include "export/exporters.h"

namespace ett::host {

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else
      out += c;
  }
  return out + "\"";
}

// The "ts" of an instant: µs with three decimals, from the capture start or (UTC) since 1970, the latter from
// integer ns (a double of µs since 1970 keeps only about a quarter of a µs).
class Timestamps {
 public:
  Timestamps(const CaptureInfo& info, const TscUtcClock* utc)
      : m_utc(utc), m_start_tsc(info.capture_start_tsc), m_tsc_hz(info.tsc_hz) {}

  // Writes at most kMaxBytes characters at `at` and returns the end.
  char* write(char* at, double time_ns) const {
    if (!m_utc) return write_fixed<3>(at, time_ns / 1000.0);
    // Through the TSC of the instant (events and action ends are TSC stamps; time_ns came from them).
    const int64_t ns = m_utc->unix_ns(tsc_at(time_ns, m_start_tsc, m_tsc_hz));
    return fmt::format_to(at, FMT_COMPILE("{}.{:03}"), ns / 1000, static_cast<int>(ns % 1000));
  }
  static constexpr size_t kMaxBytes = kFixedRoom;

 private:
  const TscUtcClock* m_utc;
  uint64_t m_start_tsc;
  uint64_t m_tsc_hz;
};

}  // namespace

// What formatting a line takes: the probes' names as JSON strings and the times.
struct PerfettoWriter::Format {
  Format(const CaptureInfo& info, const PerfettoOptions& options) : stamps(info, options.utc) {
    for (size_t probe = 0; probe < names.size(); ++probe) {
      names[probe] = json_string(probe_name(static_cast<int>(probe), options.probe_labels));
      longest_name = std::max(longest_name, names[probe].size());
    }
  }
  std::array<std::string, 256> names;  // [probe]
  size_t longest_name = 0;
  Timestamps stamps;
};

PerfettoWriter::PerfettoWriter(const CaptureInfo& info, int probes, TextOut& out,
                               const PerfettoOptions& options)
    : m_out(out),
      m_format(std::make_unique<const Format>(info, options)),
      m_blocks([this](std::span<const AnalysisEvent> events) { write(events); }) {
  out.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  const std::string name = info.name.empty() ? "ETT capture" : info.name;
  out.print("{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_string(name));
  probes = std::clamp(probes, 0, 255);
  for (int probe = 1; probe <= probes; ++probe)
    out.print(",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
              probe, m_format->names[static_cast<size_t>(probe)]);
}

PerfettoWriter::~PerfettoWriter() = default;

void PerfettoWriter::write(std::span<const AnalysisEvent> events) {
  // Each event: an instant on its probe's track and the probe's code on its counter track ("NAME code"), both
  // at the same time, written once. About 230 bytes; room for 150 of fixed text, the longest probe
  // name, 80 of integers (seq and tsc, 20 digits each; probe, code twice and lines, 3 each) and 2 times.
  const Format& format = *m_format;
  write_independent_lines(
      events.size(),
      [events, &format](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        RowCursor rows(buffer, end - begin, 240,
                       150 + 4 * 20 + 2 * Timestamps::kMaxBytes + format.longest_name);
        for (const AnalysisEvent& event : events.subspan(begin, end - begin)) {
          char* at = rows.next();
          at = put(at, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":");
          at = put_int(at, event.probe);
          at = put(at, ",\"ts\":");
          const char* const ts = at;
          at = format.stamps.write(at, event.time_ns);
          const std::string_view time(ts, static_cast<size_t>(at - ts));
          at = put(at, ",\"name\":\"code ");
          at = put_int(at, event.code);
          at = put(at, "\",\"args\":{\"seq\":");
          at = put_int(at, event.seq);
          at = put(at, ",\"lines\":");
          at = put_int(at, event.lines);
          at = put(at, ",\"tsc\":");
          at = put_int(at, event.tsc);
          at = put(at, "}},\n{\"ph\":\"C\",\"pid\":1,\"name\":");
          at = put(at, format.names[event.probe]);
          at = put(at, ",\"ts\":");
          at = put(at, time);
          at = put(at, ",\"args\":{\"code\":");
          at = put_int(at, event.code);
          at = put(at, "}}");
          rows.done(at);
        }
      },
      m_out);
}

void PerfettoWriter::finish(ActionList actions) {
  m_blocks.flush();
  // An action's id is its place in the list, from 1; its name "action code N" needs no JSON escaping. About
  // 250 bytes; room for 230 of fixed text, 6 integers and 3 times.
  const Timestamps& stamps = m_format->stamps;
  write_independent_lines(
      actions.size(),
      [actions, &stamps](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        RowCursor rows(buffer, end - begin, 260, 230 + 6 * 20 + 3 * Timestamps::kMaxBytes);
        for (size_t i = begin; i < end; ++i) {
          const Action action = actions[i];
          // The slice's begin ('b') or end ('e') event up to its name, which the begin's args follow.
          auto slice_event = [&](char* at, char phase, double time_ns) {
            at = put(at, ",\n{\"ph\":\"");
            *at++ = phase;
            at = put(at, "\",\"cat\":\"action\",\"id\":");
            at = put_int(at, i + 1);
            at = put(at, ",\"pid\":1,\"tid\":0,\"ts\":");
            at = stamps.write(at, time_ns);
            at = put(at, ",\"name\":\"action code ");
            return put_int(at, action.start_code);
          };
          char* at = slice_event(rows.next(), 'b', action.start_ns);
          at = put(at, "\",\"args\":{\"start_seq\":");
          at = put_int(at, action.start_seq);
          at = put(at, ",\"end_seq\":");
          at = put_int(at, action.end_seq);
          at = put(at, ",\"duration_ns\":");
          at = write_tenths(at, action.duration_ns);
          at = put(at, "}}");
          at = slice_event(at, 'e', action.end_ns);
          at = put(at, "\"}");
          rows.done(at);
        }
      },
      m_out);
  m_out.append("\n]}\n");
}

void write_perfetto(const Capture& capture, ActionList actions, TextOut& out,
                    const PerfettoOptions& options) {
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  PerfettoWriter writer(capture.info, probes, out, options);
  writer.add(capture.events);
  writer.finish(actions);
}

std::string export_perfetto(const Capture& capture, ActionList actions, const PerfettoOptions& options) {
  TextOut out;
  write_perfetto(capture, actions, out, options);
  return out.take();
}

}  // namespace ett::host
