// csv.h: a capture's events as CSV: seq,probe,code,tsc,time_ns,lines (time_ns with 0.1 ns resolution), and
// with a PPS mapping (--time utc) a column utc: the event's ISO-8601 UTC time with nanoseconds.
#pragma once

#include <span>
#include <string>

#include "analysis/capture.h"
#include "common/utc_time.h"
#include "export/output_file.h"

namespace ett::host {

void write_csv(const Capture& capture, TextOut& out, const TscUtcClock* utc = nullptr);
std::string export_csv(const Capture& capture, const TscUtcClock* utc = nullptr);  // the same text, whole

// The same CSV from events handed over a batch at a time in seq order (`ett export` streams the trace): the
// header when made, then the rows of each batch.
class CsvWriter {
 public:
  CsvWriter(TextOut& out, const TscUtcClock* utc);
  void add(std::span<const AnalysisEvent> events);

 private:
  TextOut* m_out;
  const TscUtcClock* m_utc;
};

}  // namespace ett::host
