// csv.cpp: writes a capture's events as CSV, a row at a time into a buffer with std::to_chars (no
// formatting library per field: this is most of an export's work).
#include "export/csv.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <span>

namespace ett::host {

namespace {

// "123.4": tenths of a ns, as fmt's {:.1f} (which this replaced) writes them. ns * 10 is rounded once more
// than the decimal conversion, so a value within a hair of a tie (x.x5) is left to fmt.
char* write_tenths(char* at, char* end, double ns) {
  const double scaled = std::fabs(ns) * 10.0;
  const double near_tie = scaled - std::floor(scaled) - 0.5;
  if (!(scaled < 9e17) || std::fabs(near_tie) < 1e-6) return fmt::format_to_n(at, end - at, "{:.1f}", ns).out;
  const auto value = static_cast<int64_t>(std::nearbyint(scaled));
  if (std::signbit(ns)) *at++ = '-';
  at = std::to_chars(at, end, value / 10).ptr;
  *at++ = '.';
  *at++ = static_cast<char>('0' + value % 10);
  return at;
}

}  // namespace

void write_csv(const Capture& capture, TextOut& out, const TscUtcClock* utc) {
  out.append(utc ? "seq,probe,code,tsc,time_ns,lines,time_utc\n" : "seq,probe,code,tsc,time_ns,lines\n");
  const std::span<const AnalysisEvent> events = capture.events;
  write_independent_lines(
      events.size(),
      [events, utc](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        IsoUtcWriter iso;
        constexpr size_t kRow = 160;  // the longest row: 20 + 3 + 3 + 20 + 26 + 3 + 30 + 7 separators
        size_t size = buffer.size();
        buffer.resize(size + (end - begin) * kRow);
        char* at = buffer.data() + size;
        for (const AnalysisEvent& e : events.subspan(begin, end - begin)) {
          char* const row_end = at + kRow;
          at = std::to_chars(at, row_end, e.seq).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.probe).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.code).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.tsc).ptr;
          *at++ = ',';
          at = write_tenths(at, row_end, e.time_ns);
          *at++ = ',';
          at = std::to_chars(at, row_end, e.lines).ptr;
          if (utc) {
            *at++ = ',';
            at = iso.write(utc->at(e.tsc), at);
          }
          *at++ = '\n';
        }
        buffer.resize(static_cast<size_t>(at - buffer.data()));
      },
      out);
}

std::string export_csv(const Capture& capture, const TscUtcClock* utc) {
  TextOut out;
  write_csv(capture, out, utc);
  return out.take();
}

}  // namespace ett::host
