// fit.h: the latency model duration = a + b * size (the NCUBE paper's method) with GSL: ordinary least
// squares, or a robust fit (iteratively reweighted least squares with bisquare weights) that one stall cannot
// pull away.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/durations.h"
#include "analysis/stats.h"
#include "common/status.h"

namespace ett::host {

// "1=16,2=500": the message size that a start code stands for. Codes 0-255, sizes >= 0 (may have a fraction).
Expected<std::map<uint8_t, double>> parse_size_of_code(std::string_view text);

enum class FitMethod {
  Linear,  // ordinary least squares (gsl_fit_linear)
  Robust,  // bisquare-weighted least squares (gsl_multifit_robust): outliers get weight near 0
};
Expected<FitMethod> parse_fit_method(std::string_view text);  // linear | robust
const char* fit_method_name(FitMethod method);

struct LinearFit {
  double intercept_ns = 0;  // a
  double slope_ns = 0;      // b, ns per size unit
  double intercept_stderr_ns = 0;
  double slope_stderr_ns = 0;  // from the residual scatter (gsl_fit_linear's covariance)
  double r2 = 0;
  double residual_sumsq = 0;
  size_t points = 0;
  size_t downweighted = 0;  // robust: points whose final weight is below kDownweighted (0 for linear)
  FitMethod method = FitMethod::Linear;
};

// A point counts as down-weighted by the robust fit when its final weight is below this.
inline constexpr double kDownweighted = 0.5;

// Errors: fewer than three points, or fewer than two distinct x values.
Expected<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y);
// The same points, fitted robustly; r2 is GSL's robust R^2 and residual_sumsq its weighted sum of squares.
Expected<LinearFit> fit_robust(std::span<const double> x, std::span<const double> y);
Expected<LinearFit> fit_line(FitMethod method, std::span<const double> x, std::span<const double> y);

struct SizeRow {
  double size = 0;
  Summary duration;  // ns
};

struct FitResult {
  LinearFit fit;
  std::vector<SizeRow> sizes;         // ascending size
  uint64_t actions_without_size = 0;  // actions whose start code is not in the map (left out)
  std::vector<double> x, y;           // the points fitted (for plots)
  // A least-squares fit that explains little (R^2 < 0.5) while a robust fit of the same points differs from
  // it by more than two standard errors in a parameter: the robust fit, to suggest (--fit linear only).
  std::optional<LinearFit> robust_differs;
  // The points the robust check fitted: all of them, or an even sample of kRobustCheckPoints when there are
  // more (the check is advice; a robust fit of millions of points would take most of the command's time).
  uint64_t robust_check_points = 0;
};

// GSL's robust fit sorts the residuals for their median at every iteration: 25,000 points take about 0.1 s,
// 100,000 took 0.6 s (the longest step of `durations --fit` at 10 M events) for a line within its error.
inline constexpr size_t kRobustCheckPoints = 25000;

// Each action's size is that of its start code.
Expected<FitResult> fit_durations(std::span<const Action> actions,
                                  const std::map<uint8_t, double>& size_of_code,
                                  FitMethod method = FitMethod::Linear);

// The same result for a report that writes a row per action before the fit: the fit's errors are found at
// once, and a least-squares fit (most of a second at millions of actions, with its per-size table and robust
// check) is computed on a second thread meanwhile; get() waits for it. `actions` must outlive the PendingFit.
class PendingFit {
 public:
  explicit PendingFit(FitResult whole) : m_result(std::move(whole)) {}
  explicit PendingFit(std::future<FitResult> later) : m_later(std::move(later)) {}
  const FitResult& get();

 private:
  FitResult m_result;
  std::future<FitResult> m_later;
};

Expected<PendingFit> start_fit_durations(std::span<const Action> actions,
                                         const std::map<uint8_t, double>& size_of_code,
                                         FitMethod method = FitMethod::Linear);

}  // namespace ett::host
