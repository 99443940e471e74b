// event_writer.cpp: CSV and JSONL rendering of events, buffered through fmt for millions of rows.
#include "image/event_writer.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cerrno>

#include "common/line_names.h"
#include "common/tsc_time.h"

namespace ett::host {

std::optional<EventFormat> event_format_from_name(std::string_view name) {
  if (name == "csv") return EventFormat::Csv;
  if (name == "jsonl") return EventFormat::Jsonl;
  if (name == "json") return EventFormat::Json;
  if (name == "text") return EventFormat::Text;
  return std::nullopt;
}

int64_t tsc_to_ns(uint64_t tsc, const EventTiming& timing) {
  // Events stamped before time 0 (pretrigger) get negative times.
  return ticks_to_ns_exact(static_cast<int64_t>(tsc - timing.capture_start_tsc), timing.hz);
}

Status write_events(std::span<const Event> events, EventFormat format, const EventTiming& timing,
                    std::FILE* out, const std::string& out_name, const WriteProgress& progress,
                    bool with_flags) {
  return write_events(EventSpan(events).feed(0, events.size()), format, timing, out, out_name, progress,
                      with_flags);
}

Status write_events(const EventFeed& feed, EventFormat format, const EventTiming& timing, std::FILE* out,
                    const std::string& out_name, const WriteProgress& progress, bool with_flags) {
  if (timing.hz == 0)
    return make_error(ErrorKind::Usage, "the TSC frequency is 0: give the CPU frequency with --cpu-hz");
  fmt::memory_buffer buffer;
  auto flush = [&]() -> Status {
    if (buffer.size() > 0 && std::fwrite(buffer.data(), 1, buffer.size(), out) != buffer.size())
      return make_error(ErrorKind::Io, errno_message(out_name + ": write failed", errno));
    buffer.clear();
    return {};
  };
  auto out_it = std::back_inserter(buffer);
  if (format == EventFormat::Csv)
    fmt::format_to(out_it, "seq,probe,code,tsc,time_ns{}\n", with_flags ? ",flags" : "");
  if (format == EventFormat::Text)
    fmt::format_to(out_it, "{:>10}  {:>5}  {:>4}  {:>20}  {:>16}  {:>5}{}\n", "seq", "probe", "code", "tsc",
                   "time_ns", "lines", with_flags ? "  flags" : "");
  // JSON: hand-written (millions of events; numbers only, nothing to escape), one object a line.
  if (format == EventFormat::Json) fmt::format_to(out_it, "[");
  uint64_t done = 0;
  for (;;) {
    ETT_TRY_ASSIGN(std::span<const Event> events, feed());
    if (events.empty()) break;
    for (const Event& event : events) {
      const int64_t ns = tsc_to_ns(event.tsc, timing);
      switch (format) {
        case EventFormat::Csv:
          fmt::format_to(out_it, FMT_COMPILE("{},{},{},{},{}"), event.seq, event.probe, event.code, event.tsc,
                         ns);
          if (with_flags) fmt::format_to(out_it, ",{}", event_flags_text(event.flags));
          fmt::format_to(out_it, "\n");
          break;
        case EventFormat::Jsonl:
          fmt::format_to(
              out_it,
              FMT_COMPILE("{{\"seq\":{},\"probe\":{},\"code\":{},\"tsc\":{},\"time_ns\":{},\"lines\":{}"),
              event.seq, event.probe, event.code, event.tsc, ns, event.lines);
          if (with_flags) fmt::format_to(out_it, ",\"flags\":\"{}\"", event_flags_text(event.flags));
          fmt::format_to(out_it, "}}\n");
          break;
        case EventFormat::Json:
          fmt::format_to(
              out_it,
              FMT_COMPILE(
                  "{}\n  {{\"seq\":{},\"probe\":{},\"code\":{},\"tsc\":{},\"time_ns\":{},\"lines\":{}"),
              done == 0 ? "" : ",", event.seq, event.probe, event.code, event.tsc, ns, event.lines);
          if (with_flags) fmt::format_to(out_it, ",\"flags\":\"{}\"", event_flags_text(event.flags));
          fmt::format_to(out_it, "}}");
          break;
        case EventFormat::Text:
          fmt::format_to(out_it, FMT_COMPILE("{:>10}  {:>5}  {:>4}  {:>20}  {:>16}  {:>5}"), event.seq,
                         event.probe, event.code, event.tsc, ns, event.lines);
          if (with_flags)
            fmt::format_to(out_it, "  {}", event.flags ? event_flags_text(event.flags) : std::string("-"));
          fmt::format_to(out_it, "\n");
          break;
      }
      if (buffer.size() >= (1u << 16)) {
        auto flushed = flush();
        if (!flushed) return flushed;
      }
      if (++done % (1u << 16) == 0 && progress && !progress(done))
        return make_error(ErrorKind::Interrupted, "interrupted: " + out_name + " is incomplete");
    }
  }
  if (format == EventFormat::Json) fmt::format_to(out_it, "{}]\n", done == 0 ? "" : "\n");
  auto flushed = flush();
  if (!flushed) return flushed;
  if (std::fflush(out) != 0)
    return make_error(ErrorKind::Io, errno_message(out_name + ": write failed", errno));
  return {};
}

}  // namespace ett::host
