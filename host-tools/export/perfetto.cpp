// perfetto.cpp: writes the Chrome trace-event JSON format (timestamps in microseconds).
#include "export/perfetto.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "common/decimals.h"
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
  Timestamps(const Capture& capture, const TscUtcClock* utc)
      : m_utc(utc), m_start_tsc(capture.info.capture_start_tsc), m_tsc_hz(capture.info.tsc_hz) {}

  void write(fmt::memory_buffer& buffer, double time_ns) const {
    if (!m_utc) {
      char field[400];
      buffer.append(field, write_fixed<3>(field, time_ns / 1000.0));
      return;
    }
    // The TSC of the instant (events and action ends are TSC stamps; time_ns came from them).
    const double ticks = time_ns * static_cast<double>(m_tsc_hz) / 1e9;
    const int64_t ns = m_utc->unix_ns(m_start_tsc + static_cast<uint64_t>(std::llround(ticks)));
    fmt::format_to(fmt::appender(buffer), FMT_COMPILE("{}.{:03}"), ns / 1000, static_cast<int>(ns % 1000));
  }

 private:
  const TscUtcClock* m_utc;
  uint64_t m_start_tsc;
  uint64_t m_tsc_hz;
};

}  // namespace

void write_perfetto(const Capture& capture, ActionList actions, TextOut& out,
                    const PerfettoOptions& options) {
  out.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  const std::string name = capture.info.name.empty() ? "ETT capture" : capture.info.name;
  out.print("{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_string(name));
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  std::vector<std::string> names(static_cast<size_t>(probes) + 1);
  for (int probe = 1; probe <= probes; ++probe) {
    names[probe] = json_string(probe_name(probe, options.probe_labels));
    out.print(",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
              probe, names[probe]);
  }
  const Timestamps stamps(capture, options.utc);
  const std::span<const AnalysisEvent> events = capture.events;
  // Each event: an instant on its probe's track and the probe's code on its counter track ("NAME code").
  write_independent_lines(
      events.size(),
      [events, &names, &stamps](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        auto out = fmt::appender(buffer);
        for (const AnalysisEvent& event : events.subspan(begin, end - begin)) {
          fmt::format_to(out, FMT_COMPILE(",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{},\"ts\":"),
                         event.probe);
          stamps.write(buffer, event.time_ns);
          fmt::format_to(
              out, FMT_COMPILE(",\"name\":\"code {}\",\"args\":{{\"seq\":{},\"lines\":{},\"tsc\":{}}}}}"),
              event.code, event.seq, event.lines, event.tsc);
          const std::string& probe = event.probe < names.size() ? names[event.probe] : names[0];
          fmt::format_to(out, FMT_COMPILE(",\n{{\"ph\":\"C\",\"pid\":1,\"name\":{},\"ts\":"), probe);
          stamps.write(buffer, event.time_ns);
          fmt::format_to(out, FMT_COMPILE(",\"args\":{{\"code\":{}}}}}"), event.code);
        }
      },
      out);
  // An action's id is its place in the list, from 1.
  write_independent_lines(
      actions.size(),
      [actions, &stamps](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        auto out = fmt::appender(buffer);
        for (size_t i = begin; i < end; ++i) {
          const Action action = actions[i];
          const uint64_t id = i + 1;
          // The name "action code N" needs no JSON escaping.
          fmt::format_to(
              out, FMT_COMPILE(",\n{{\"ph\":\"b\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":"),
              id);
          stamps.write(buffer, action.start_ns);
          fmt::format_to(
              out,
              FMT_COMPILE(",\"name\":\"action code {}\",\"args\":{{\"start_seq\":{},\"end_seq\":{},"
                          "\"duration_ns\":"),
              action.start_code, action.start_seq, action.end_seq);
          char field[400];
          buffer.append(field, write_tenths(field, action.duration_ns));
          fmt::format_to(
              out,
              FMT_COMPILE("}}}},\n{{\"ph\":\"e\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":"),
              id);
          stamps.write(buffer, action.end_ns);
          fmt::format_to(out, FMT_COMPILE(",\"name\":\"action code {}\"}}"), action.start_code);
        }
      },
      out);
  out.append("\n]}\n");
}

std::string export_perfetto(const Capture& capture, ActionList actions, const PerfettoOptions& options) {
  TextOut out;
  write_perfetto(capture, actions, out, options);
  return out.take();
}

}  // namespace ett::host
