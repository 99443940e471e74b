// csv.cpp: writes a capture's events as CSV.
#include "export/csv.h"

#include <span>

namespace ett::host {

void write_csv(const Capture& capture, TextOut& out) {
  out.append("seq,probe,code,tsc,time_ns,lines\n");
  const std::span<const AnalysisEvent> events = capture.events;
  write_independent_lines(
      events.size(),
      [events](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        for (const AnalysisEvent& e : events.subspan(begin, end - begin))
          fmt::format_to(std::back_inserter(buffer), "{},{},{},{},{:.1f},{}\n", e.seq, e.probe, e.code, e.tsc,
                         e.time_ns, e.lines);
      },
      out);
}

std::string export_csv(const Capture& capture) {
  TextOut out;
  write_csv(capture, out);
  return out.take();
}

}  // namespace ett::host
