// output.h: the analyses' results as a readable report, CSV or JSON (what `ett analyze` prints).
#pragma once

#include <optional>
#include <string>

#include "analysis/align.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
#include "analysis/histogram.h"
#include "analysis/intervals.h"
#include "analysis/precision.h"
#include "common/status.h"

namespace ett::host {

enum class OutputFormat { Text, Csv, Json };
Expected<OutputFormat> parse_output_format(const std::string& text);  // text | csv | json

std::string format_precision(const PrecisionResult& result, OutputFormat format);
// `fit` is printed after the durations (JSON: a "fit" member) when given.
std::string format_durations(const DurationsResult& result, const FitResult* fit, OutputFormat format);
std::string format_intervals(const IntervalsResult& result, OutputFormat format);
std::string format_histogram(const HistogramResult& result, OutputFormat format);
// Text and JSON: the clock fits; CSV: the merged timeline. `trace_ids` name the captures in order.
std::string format_align(const AlignResult& result, const std::vector<int64_t>& trace_ids,
                         OutputFormat format);

}  // namespace ett::host
