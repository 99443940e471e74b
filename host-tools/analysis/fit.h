// fit.h: least-squares latency model duration = a + b * size (the NCUBE paper's method) with GSL.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/durations.h"
#include "analysis/stats.h"
#include "common/status.h"

namespace ett::host {

// "1=16,2=500": the message size that a start code stands for. Codes 0-255, sizes >= 0 (may have a fraction).
Expected<std::map<uint8_t, double>> parse_size_of_code(std::string_view text);

struct LinearFit {
  double intercept_ns = 0;  // a
  double slope_ns = 0;      // b, ns per size unit
  double intercept_stderr_ns = 0;
  double slope_stderr_ns = 0;  // from the residual scatter (gsl_fit_linear's covariance)
  double r2 = 0;
  double residual_sumsq = 0;
  size_t points = 0;
};

// Errors: fewer than three points, or fewer than two distinct x values.
Expected<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y);

struct SizeRow {
  double size = 0;
  Summary duration;  // ns
};

struct FitResult {
  LinearFit fit;
  std::vector<SizeRow> sizes;         // ascending size
  uint64_t actions_without_size = 0;  // actions whose start code is not in the map (left out)
  std::vector<double> x, y;           // the points fitted (for plots)
};

// Each action's size is that of its start code.
Expected<FitResult> fit_durations(std::span<const Action> actions,
                                  const std::map<uint8_t, double>& size_of_code);

}  // namespace ett::host
