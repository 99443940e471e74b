// output.h: the analyses' results as a readable report, CSV or JSON (what `ett analyze` prints).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/align.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
#include "analysis/histogram.h"
#include "analysis/intervals.h"
#include "analysis/pps.h"
#include "analysis/precision.h"
#include "common/decimals.h"
#include "common/status.h"
#include "common/utc_time.h"

namespace ett::host {

enum class OutputFormat { Text, Csv, Json };
Expected<OutputFormat> parse_output_format(const std::string& text);  // text | csv | json

// A report written in parts, so that one with a row per action of 10 M events is never held whole: each part
// is its text, then what late_text() returns (text that waits on work still running, asked for only when the
// writer reaches the part), then `rows` rows that format_rows(begin, end, out) appends for rows [begin, end).
// Rows do not depend on each other (a writer may format two ranges at once); the report's lifetime is the
// result's.
struct ReportPart {
  std::string text;
  size_t rows = 0;
  std::function<void(size_t begin, size_t end, fmt::memory_buffer& out)> format_rows = {};
  std::function<std::string()> late_text = {};
};
using Report = std::vector<ReportPart>;
// The whole text of a report (tests, and reports that are small).
std::string report_text(const Report& report);

// --time utc: the ISO-8601 UTC text of a time in ns from the capture's start, and where the UTC labels came
// from (the PPS mapping's label source).
struct UtcLabels {
  std::string source;
  std::function<std::string(double time_ns)> at;
};

std::string format_precision(const PrecisionResult& result, OutputFormat format);
// `fit` is printed after the durations (JSON: a "fit" member) when given, waited for only there; `utc` adds
// each action's start and end in UTC (CSV: start_utc and end_utc columns; JSON: members of each action and
// "time": "utc"; text: a table of them at the end).
Report durations_report(const DurationsResult& result, PendingFit* fit, OutputFormat format,
                        const UtcLabels* utc = nullptr);
std::string format_durations(const DurationsResult& result, PendingFit* fit, OutputFormat format,
                             const UtcLabels* utc = nullptr);
std::string format_intervals(const IntervalsResult& result, OutputFormat format);
std::string format_histogram(const HistogramResult& result, OutputFormat format);
// The UTC of an event of a merged timeline (align --time utc): from its capture's index, the event and its
// time on the reference clock.
using MergedUtc = std::function<UtcNs(size_t capture, const AnalysisEvent& event, double reference_ns)>;
// Text: the clock fits; CSV: the merged timeline; JSON: the fits and the merged timeline (written as
// nlohmann-json would dump the document). `trace_ids` name the captures in order; `utc` adds each merged
// event's time_utc. The timeline's rows are written a range at a time from the captures' events; the report
// refers to the result, the captures and `utc`.
Report align_report(const AlignResult& result, std::span<const Capture> captures,
                    std::span<const int64_t> trace_ids, OutputFormat format, const MergedUtc* utc = nullptr);
// The same as one text.
std::string format_align(const AlignResult& result, std::span<const Capture> captures,
                         std::span<const int64_t> trace_ids, OutputFormat format,
                         const MergedUtc* utc = nullptr);
// A line of a merged timeline's CSV: trace id, seq, probe, code, lines, time_ns, its time on the reference
// clock (ns, one decimal), and its time_utc when `utc` is given (written by `iso`). Writes at most
// kMergedRowMax characters at `at` (a RowCursor row) and returns the end.
constexpr size_t kMergedRowMax = 5 * 20 + 2 * kFixedRoom + kIsoUtcLength + 8;
char* write_merged_row(char* at, int64_t trace_id, const AnalysisEvent& event, LinearClock clock,
                       const UtcNs* utc, IsoUtcWriter& iso);
// Text and JSON: the rate, jitter and UTC label; CSV: one row per pulse and per rejected edge.
std::string format_pps(const PpsResult& result, OutputFormat format);

}  // namespace ett::host
