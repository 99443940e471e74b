// html.h: one self-contained HTML report (inline CSS and SVG, no external resources): capture summary,
// precision table, timeline with one lane per probe, duration histogram, the latency fit plot, and a
// comparison with baseline captures (both duration distributions on one axis).
#pragma once

#include <string>

#include "analysis/capture.h"
#include "analysis/compare.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
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
};

std::string export_html(const ReportInput& input);

// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace ett::host
