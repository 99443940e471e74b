// export_html.h: one self-contained HTML report (inline CSS and SVG, no external resources): capture summary,
// precision table, timeline with one lane per probe, duration histogram and the latency fit plot.
#pragma once

#include <string>

#include "analysis_capture.h"
#include "analysis_durations.h"
#include "analysis_fit.h"
#include "analysis_precision.h"

namespace ett::host {

struct ReportInput {
  const Capture* capture = nullptr;            // required
  const PrecisionResult* precision = nullptr;  // each optional: a section says what is missing and how to get it
  const DurationsResult* durations = nullptr;
  const FitResult* fit = nullptr;
};

std::string export_html(const ReportInput& input);

// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace ett::host
