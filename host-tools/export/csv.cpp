// csv.cpp: writes a capture's events as CSV, a row at a time into a buffer through a RowCursor.
#include "export/csv.h"

#include <fmt/format.h>

#include <cmath>
#include <span>

#include "common/decimals.h"
#include "common/row_cursor.h"

namespace ett::host {

CsvWriter::CsvWriter(TextOut& out, const TscUtcClock* utc) : m_out(&out), m_utc(utc) {
  out.append(utc ? "seq,probe,code,tsc,time_ns,lines,time_utc\n" : "seq,probe,code,tsc,time_ns,lines\n");
}

void CsvWriter::add(std::span<const AnalysisEvent> events) {
  write_independent_lines(
      events.size(),
      [events, utc = m_utc](size_t begin, size_t end, fmt::memory_buffer& buffer) {
        IsoUtcWriter iso;
        // The longest row: 20 + 3 + 3 + 20 + a double (far less than kFixedRoom for a TSC time) + 3 + 30 + 7
        // separators; rows are about 50 bytes.
        RowCursor rows(buffer, end - begin, 64, 86 + kFixedRoom);
        for (const AnalysisEvent& e : events.subspan(begin, end - begin)) {
          char* at = rows.next();
          at = put_int(at, e.seq);
          *at++ = ',';
          at = put_int(at, e.probe);
          *at++ = ',';
          at = put_int(at, e.code);
          *at++ = ',';
          at = put_int(at, e.tsc);
          *at++ = ',';
          at = write_tenths(at, e.time_ns);
          *at++ = ',';
          at = put_int(at, e.lines);
          if (utc) {
            *at++ = ',';
            at = iso.write(utc->at(e.tsc), at);
          }
          *at++ = '\n';
          rows.done(at);
        }
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
