// perfetto.cpp: writes the Chrome trace-event JSON format (timestamps in microseconds).
#include "export/perfetto.h"

#include <fmt/format.h>

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

std::string micros(double ns) {
  return fmt::format("{:.3f}", ns / 1000.0);
}

}  // namespace

std::string export_perfetto(const Capture& capture, std::span<const Action> actions) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  const std::string name = capture.info.name.empty() ? "ETT capture" : capture.info.name;
  out +=
      fmt::format("{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
                  json_string(name));
  int probes = capture.info.probe_count;
  for (const AnalysisEvent& event : capture.events) probes = std::max<int>(probes, event.probe);
  for (int probe = 1; probe <= probes; ++probe)
    out += fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{0},\"name\":\"thread_name\",\"args\":{{\"name\":"
        "\"probe {0}\"}}}}",
        probe);
  for (const AnalysisEvent& event : capture.events)
    out += fmt::format(
        ",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":{},\"ts\":{},\"name\":\"code {}\","
        "\"args\":{{\"seq\":{},\"lines\":{},\"tsc\":{}}}}}",
        event.probe, micros(event.time_ns), event.code, event.seq, event.lines, event.tsc);
  uint64_t id = 0;
  for (const Action& action : actions) {
    ++id;
    const std::string action_name = fmt::format("action code {}", action.start_code);
    out += fmt::format(
        ",\n{{\"ph\":\"b\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":{},\"name\":{},"
        "\"args\":{{\"start_seq\":{},\"end_seq\":{},\"duration_ns\":{:.1f}}}}}",
        id, micros(action.start_ns), json_string(action_name), action.start_seq, action.end_seq,
        action.duration_ns);
    out += fmt::format(
        ",\n{{\"ph\":\"e\",\"cat\":\"action\",\"id\":{},\"pid\":1,\"tid\":0,\"ts\":{},\"name\":{}}}", id,
        micros(action.end_ns), json_string(action_name));
  }
  out += "\n]}\n";
  return out;
}

}  // namespace ett::host
