// csv.cpp: writes a capture's events as CSV, a row at a time into a buffer with std::to_chars (no
// formatting library per field: this is most of an export's work).
#include "export/csv.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <span>

#include "common/decimals.h"

namespace ett::host {

CsvWriter::CsvWriter(TextOut& out, const TscUtcClock* utc) : m_out(&out), m_utc(utc) {
  out.append(utc ? "seq,probe,code,tsc,time_ns,lines,time_utc\n" : "seq,probe,code,tsc,time_ns,lines\n");
}

void CsvWriter::add(std::span<const AnalysisEvent> events) {
  write_independent_lines(
      events.size(),
      [events, utc = m_utc](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        IsoUtcWriter iso;
        // Room for the longest row: 20 + 3 + 3 + 20 + 400 (a double: far more than a TSC time needs) + 3 +
        // 30 + 7 separators. Rows are about 50 bytes: the room is made for many rows at once.
        constexpr size_t kRow = 490, kTypicalRow = 64;
        size_t size = buffer.size();
        buffer.resize(size + kRow + (end - begin) * kTypicalRow);
        char* at = buffer.data() + size;
        for (const AnalysisEvent& e : events.subspan(begin, end - begin)) {
          if (buffer.data() + buffer.size() - at < static_cast<std::ptrdiff_t>(kRow)) {
            size = static_cast<size_t>(at - buffer.data());
            buffer.resize(size + kRow + (end - begin) * kTypicalRow);
            at = buffer.data() + size;
          }
          char* const row_end = at + kRow;
          at = std::to_chars(at, row_end, e.seq).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.probe).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.code).ptr;
          *at++ = ',';
          at = std::to_chars(at, row_end, e.tsc).ptr;
          *at++ = ',';
          at = write_tenths(at, e.time_ns);
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
      *m_out);
}

void write_csv(const Capture& capture, TextOut& out, const TscUtcClock* utc) {
  CsvWriter(out, utc).add(capture.events);
}

std::string export_csv(const Capture& capture, const TscUtcClock* utc) {
  TextOut out;
  write_csv(capture, out, utc);
  return out.take();
}

}  // namespace ett::host
