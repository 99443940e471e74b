// csv.h: a capture's events as CSV: seq,probe,code,tsc,time_ns,lines (time_ns with 0.1 ns resolution).
#pragma once

#include <string>

#include "analysis/capture.h"
#include "export/output_file.h"

namespace ett::host {

void write_csv(const Capture& capture, TextOut& out);
std::string export_csv(const Capture& capture);  // the same text, whole

}  // namespace ett::host
