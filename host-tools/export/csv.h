// csv.h: a capture's events as CSV: seq,probe,code,tsc,time_ns,lines (time_ns with 0.1 ns resolution).
#pragma once

#include <string>

#include "analysis/capture.h"

namespace ett::host {

std::string export_csv(const Capture& capture);

}  // namespace ett::host
