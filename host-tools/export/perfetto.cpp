// perfetto.cpp: writes the Chrome trace-event JSON format (timestamps in microseconds).
#include "export/perfetto.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

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

}  // namespace

void write_perfetto(const Capture& capture, std::span<const Action> actions, TextOut& out) {
  out.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  const std::string name = capture.info.name.empty() ? "ETT capture" : capture.info.name;
  out.print("{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_string(name));
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  for (int probe = 1; probe <= probes; ++probe)
    out.print(
        ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{0},\"name\":\"thread_name\",\"args\":{{\"name\":"
        "\"probe {0}\"}}}}",
        probe);
  const std::span<const AnalysisEvent> events = capture.events;
  write_independent_lines(
      events.size(),
      [events](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        for (const AnalysisEvent& event : events.subspan(begin, end - begin))
          fmt::format_to(
              std::back_inserter(buffer),
              ",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{},\"ts\":{:.3f},\"name\":\"code {}\","
              "\"args\":{{\"seq\":{},\"lines\":{},\"tsc\":{}}}}}",
              event.probe, event.time_ns / 1000.0, event.code, event.seq, event.lines, event.tsc);
      },
      out);
  // An action's id is its place in the list, from 1.
  write_independent_lines(
      actions.size(),
      [actions](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        for (size_t i = begin; i < end; ++i) {
          const Action& action = actions[i];
          const uint64_t id = i + 1;
          // The name "action code N" needs no JSON escaping.
          fmt::format_to(std::back_inserter(buffer),
                         ",\n{{\"ph\":\"b\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":{:.3f},"
                         "\"name\":\"action code {}\",\"args\":{{\"start_seq\":{},\"end_seq\":{},"
                         "\"duration_ns\":{:.1f}}}}}",
                         id, action.start_ns / 1000.0, action.start_code, action.start_seq, action.end_seq,
                         action.duration_ns);
          fmt::format_to(std::back_inserter(buffer),
                         ",\n{{\"ph\":\"e\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":{:.3f},"
                         "\"name\":\"action code {}\"}}",
                         id, action.end_ns / 1000.0, action.start_code);
        }
      },
      out);
  out.append("\n]}\n");
}

std::string export_perfetto(const Capture& capture, std::span<const Action> actions) {
  TextOut out;
  write_perfetto(capture, actions, out);
  return out.take();
}

}  // namespace ett::host
