// csv.cpp: writes a capture's events as CSV.
#include "export/csv.h"

#include <fmt/format.h>

namespace ett::host {

std::string export_csv(const Capture& capture) {
  std::string out = "seq,probe,code,tsc,time_ns,lines\n";
  for (const AnalysisEvent& e : capture.events)
    out += fmt::format("{},{},{},{},{:.1f},{}\n", e.seq, e.probe, e.code, e.tsc, e.time_ns, e.lines);
  return out;
}

}  // namespace ett::host
