// event_writer.cpp: CSV and JSONL rendering of events, buffered through fmt for millions of rows.
#include "image/event_writer.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cerrno>

#include "common/tsc_time.h"

namespace ett::host {

std::optional<EventFormat> event_format_from_name(std::string_view name) {
  if (name == "csv") return EventFormat::Csv;
  if (name == "jsonl") return EventFormat::Jsonl;
  return std::nullopt;
}

int64_t tsc_to_ns(uint64_t tsc, const EventTiming& timing) {
  // Events stamped before time 0 (pretrigger) get negative times.
  return ticks_to_ns_exact(static_cast<int64_t>(tsc - timing.capture_start_tsc), timing.hz);
}

Status write_events(std::span<const Event> events, EventFormat format, const EventTiming& timing,
                    std::FILE* out, const std::string& out_name) {
  if (timing.hz == 0)
    return make_error(ErrorKind::Usage, "the TSC frequency is 0: give the CPU frequency with --cpu-hz");
  fmt::memory_buffer buffer;
  auto flush = [&]() -> Status {
    if (buffer.size() > 0 && std::fwrite(buffer.data(), 1, buffer.size(), out) != buffer.size())
      return make_error(ErrorKind::Io, errno_message(out_name + ": write failed", errno));
    buffer.clear();
    return {};
  };
  if (format == EventFormat::Csv) fmt::format_to(std::back_inserter(buffer), "seq,probe,code,tsc,time_ns\n");
  for (const Event& event : events) {
    const int64_t ns = tsc_to_ns(event.tsc, timing);
    if (format == EventFormat::Csv)
      fmt::format_to(std::back_inserter(buffer), FMT_COMPILE("{},{},{},{},{}\n"), event.seq, event.probe,
                     event.code, event.tsc, ns);
    else
      fmt::format_to(
          std::back_inserter(buffer),
          FMT_COMPILE("{{\"seq\":{},\"probe\":{},\"code\":{},\"tsc\":{},\"time_ns\":{},\"lines\":{}}}\n"),
          event.seq, event.probe, event.code, event.tsc, ns, event.lines);
    if (buffer.size() >= (1u << 16)) {
      auto flushed = flush();
      if (!flushed) return flushed;
    }
  }
  auto flushed = flush();
  if (!flushed) return flushed;
  if (std::fflush(out) != 0)
    return make_error(ErrorKind::Io, errno_message(out_name + ": write failed", errno));
  return {};
}

}  // namespace ett::host
