// html.h: one self-contained HTML report (inline CSS and SVG, no external resources): capture summary,
// precision table, timeline with one lane per probe, duration histogram and the latency fit plot.
#pragma once

#include <string>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
#include "analysis/precision.h"

namespace ett::host {

struct ReportInput {
  const Capture* capture = nullptr;  // required
  const PrecisionResult* precision =
      nullptr;  // each optional: a section says what is missing and how to get it
  const DurationsResult* durations = nullptr;
  const FitResult* fit = nullptr;
};

std::string export_html(const ReportInput& input);

// Text made safe for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace ett::host
