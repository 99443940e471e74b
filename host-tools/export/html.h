// html.h: one self-contained, offline HTML report (its style, data, the uPlot charting library and the script
// that draws the charts all inline; nothing is fetched): capture summary, precision table and loop-step
// histogram, a zoomable timeline with one lane per probe and the stalls, duration histogram and duration over
// time, the latency fit, and a comparison with baseline captures (both duration distributions on one axis).
#pragma once

#include <map>
#include <string>

#include "analysis/capture.h"
#include "analysis/compare.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
#include "analysis/pps.h"
#include "analysis/precision.h"

namespace ett::host {

// The report's trace (the candidate) against baseline captures of the same actions (`ett report --baseline`).
struct ReportComparison {
  std::vector<int64_t> baseline_traces;
  std::vector<double> baseline_ns;  // durations of the actions no stall touched
  std::vector<double> candidate_ns;
  CompareResult result;
};

struct ReportInput {
  const Capture* capture = nullptr;  // required
  const PrecisionResult* precision =
      nullptr;  // each optional: a section says what is missing and how to get it
  const DurationsResult* durations = nullptr;
  const FitResult* fit = nullptr;
  const ReportComparison* comparison = nullptr;
  std::map<int, std::string> probe_labels;  // probe -> name given by `ett label` (legends, lanes, tables)
  // `ett report --time utc`: the trace's PPS mapping (with its UTC label); the summary gives the UTC of time
  // 0 and the time axes (timeline, durations over time) read UTC time of day.
  const PpsResult* utc = nullptr;
  // The trace's stored PPS mapping (`ett analyze pps`), shown as a table whether or not the axes read UTC.
  const PpsResult* pps = nullptr;
};

std::string export_html(const ReportInput& input);

// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace ett::host
