// fit.cpp: duration = a + b * size by least squares (gsl_fit_linear) or robustly (gsl_multifit_robust), and
// the per-size table.
#include "analysis/fit.h"

#include <fmt/format.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>

#include <array>
#include <charconv>
#include <cmath>
#include <future>
#include <memory>
#include <string>

namespace ett::host {

Expected<std::map<uint8_t, double>> parse_size_of_code(std::string_view text) {
  std::map<uint8_t, double> sizes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    unsigned code = 0;
    double size = 0;
    bool ok = eq != std::string_view::npos && eq > 0 && eq + 1 < item.size();
    if (ok) {
      auto [p1, e1] = std::from_chars(item.data(), item.data() + eq, code);
      auto [p2, e2] = std::from_chars(item.data() + eq + 1, item.data() + item.size(), size);
      ok = e1 == std::errc() && p1 == item.data() + eq && code <= 255 && e2 == std::errc() &&
           p2 == item.data() + item.size() && size >= 0 && std::isfinite(size);
    }
    if (!ok)
      return make_error(
          ErrorKind::Usage,
          fmt::format("--size-of-code: '{}' is not CODE=SIZE (code 0-255, size >= 0), in \"{}\"", item,
                      text));
    if (!sizes.emplace(static_cast<uint8_t>(code), size).second)
      return make_error(ErrorKind::Usage, fmt::format("--size-of-code: code {} is given twice", code));
    start = comma + 1;
  }
  return sizes;
}

namespace {

Status check_points(size_t points, bool distinct) {
  if (points < 3)
    return make_error(ErrorKind::Usage, fmt::format("a linear fit needs at least 3 points, got {}", points));
  if (!distinct) return make_error(ErrorKind::Usage, "a linear fit needs at least two different sizes");
  return {};
}

Status check_points(std::span<const double> x, std::span<const double> y) {
  bool distinct = false;
  for (double v : x) distinct = distinct || v != x[0];
  return check_points(x.size() == y.size() ? x.size() : 0, distinct);
}

struct GslFree {
  void operator()(gsl_matrix* m) const { gsl_matrix_free(m); }
  void operator()(gsl_vector* v) const { gsl_vector_free(v); }
  void operator()(gsl_multifit_robust_workspace* w) const { gsl_multifit_robust_free(w); }
};
template <typename T>
using GslPtr = std::unique_ptr<T, GslFree>;

// GSL's default error handler aborts the program; the robust fit reports "no convergence" as a status
// instead.
class GslErrorsAsValues {
 public:
  GslErrorsAsValues() : m_old(gsl_set_error_handler_off()) {}
  ~GslErrorsAsValues() { gsl_set_error_handler(m_old); }
  GslErrorsAsValues(const GslErrorsAsValues&) = delete;
  GslErrorsAsValues& operator=(const GslErrorsAsValues&) = delete;

 private:
  gsl_error_handler_t* m_old;
};

// A parameter differs by more than two of the least-squares fit's standard errors.
bool differs(const LinearFit& linear, const LinearFit& robust) {
  return std::abs(robust.slope_ns - linear.slope_ns) > 2 * linear.slope_stderr_ns ||
         std::abs(robust.intercept_ns - linear.intercept_ns) > 2 * linear.intercept_stderr_ns;
}

}  // namespace

Expected<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y) {
  ETT_TRY(check_points(x, y));
  LinearFit fit;
  double cov00 = 0, cov01 = 0, cov11 = 0;
  gsl_fit_linear(x.data(), 1, y.data(), 1, x.size(), &fit.intercept_ns, &fit.slope_ns, &cov00, &cov01, &cov11,
                 &fit.residual_sumsq);
  fit.intercept_stderr_ns = std::sqrt(cov00);
  fit.slope_stderr_ns = std::sqrt(cov11);
  fit.points = x.size();
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double total = 0;
  for (double v : y) total += (v - mean) * (v - mean);
  fit.r2 = total > 0 ? 1.0 - fit.residual_sumsq / total : 1.0;
  return fit;
}

Expected<FitMethod> parse_fit_method(std::string_view text) {
  if (text == "linear") return FitMethod::Linear;
  if (text == "robust") return FitMethod::Robust;
  return make_error(ErrorKind::Usage, fmt::format("--fit '{}': expected linear or robust", text));
}

const char* fit_method_name(FitMethod method) {
  return method == FitMethod::Robust ? "robust" : "linear";
}

Expected<LinearFit> fit_robust(std::span<const double> x, std::span<const double> y) {
  ETT_TRY(check_points(x, y));
  const size_t n = x.size();
  GslPtr<gsl_matrix> design(gsl_matrix_alloc(n, 2));
  GslPtr<gsl_vector> observed(gsl_vector_alloc(n));
  GslPtr<gsl_vector> coefficients(gsl_vector_alloc(2));
  GslPtr<gsl_matrix> covariance(gsl_matrix_alloc(2, 2));
  GslPtr<gsl_multifit_robust_workspace> work(gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, n, 2));
  for (size_t i = 0; i < n; ++i) {
    gsl_matrix_set(design.get(), i, 0, 1.0);
    gsl_matrix_set(design.get(), i, 1, x[i]);
    gsl_vector_set(observed.get(), i, y[i]);
  }
  GslErrorsAsValues errors;
  const int status =
      gsl_multifit_robust(design.get(), observed.get(), coefficients.get(), covariance.get(), work.get());
  if (status != GSL_SUCCESS && status != GSL_EMAXITER)
    return make_error(ErrorKind::Usage, fmt::format("the robust fit failed: {}", gsl_strerror(status)));
  const gsl_multifit_robust_stats stats = gsl_multifit_robust_statistics(work.get());
  LinearFit fit;
  fit.method = FitMethod::Robust;
  fit.intercept_ns = gsl_vector_get(coefficients.get(), 0);
  fit.slope_ns = gsl_vector_get(coefficients.get(), 1);
  fit.intercept_stderr_ns = std::sqrt(gsl_matrix_get(covariance.get(), 0, 0));
  fit.slope_stderr_ns = std::sqrt(gsl_matrix_get(covariance.get(), 1, 1));
  fit.r2 = stats.Rsq;
  fit.residual_sumsq = stats.sse;
  fit.points = n;
  for (size_t i = 0; i < n; ++i)
    if (gsl_vector_get(stats.weights, i) < kDownweighted) ++fit.downweighted;
  return fit;
}

Expected<LinearFit> fit_line(FitMethod method, std::span<const double> x, std::span<const double> y) {
  return method == FitMethod::Robust ? fit_robust(x, y) : fit_linear(x, y);
}

Expected<FitResult> fit_durations(std::span<const Action> actions,
                                  const std::map<uint8_t, double>& size_of_code, FitMethod method) {
  FitResult result;
  // Sizes by start code in a table (no map lookup per action), and each size's durations gathered in one
  // vector per distinct size, in ascending order of size.
  std::map<double, size_t> size_rank;
  for (const auto& [code, size] : size_of_code) size_rank.emplace(size, 0);
  std::vector<double> sizes;
  for (auto& [size, rank] : size_rank) {
    rank = sizes.size();
    sizes.push_back(size);
  }
  constexpr size_t kNoSize = SIZE_MAX;
  std::array<size_t, 256> rank_of_code;
  rank_of_code.fill(kNoSize);
  for (const auto& [code, size] : size_of_code) rank_of_code[code] = size_rank.at(size);
  std::vector<size_t> counts(sizes.size());
  for (const Action& action : actions)
    if (rank_of_code[action.start_code] != kNoSize) ++counts[rank_of_code[action.start_code]];
  std::vector<std::vector<double>> by_size(sizes.size());
  size_t sized = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    by_size[i].reserve(counts[i]);
    sized += counts[i];
  }
  result.x.reserve(sized);
  result.y.reserve(sized);
  result.actions_without_size = actions.size() - sized;
  for (const Action& action : actions) {
    const size_t rank = rank_of_code[action.start_code];
    if (rank == kNoSize) continue;
    result.x.push_back(sizes[rank]);
    result.y.push_back(action.duration_ns);
    by_size[rank].push_back(action.duration_ns);
  }
  ETT_TRY_ASSIGN(result.fit, fit_line(method, result.x, result.y));
  // The robust check (a fraction of a second of GSL at 100,000 points) runs on a second thread while this one
  // summarizes the sizes; it reads x and y, which stay as they are.
  std::future<std::optional<LinearFit>> robust_check;
  if (method == FitMethod::Linear && result.fit.r2 < 0.5) {
    result.robust_check_points = std::min<size_t>(result.x.size(), kRobustCheckPoints);
    robust_check = std::async(std::launch::async, [&result]() -> std::optional<LinearFit> {
      std::span<const double> x = result.x, y = result.y;
      std::vector<double> sample_x, sample_y;
      if (x.size() > kRobustCheckPoints) {  // every k-th point, k fractional: spread over the whole capture
        sample_x.reserve(kRobustCheckPoints);
        sample_y.reserve(kRobustCheckPoints);
        for (size_t i = 0; i < kRobustCheckPoints; ++i) {
          const size_t at =
              static_cast<size_t>(static_cast<unsigned __int128>(i) * x.size() / kRobustCheckPoints);
          sample_x.push_back(x[at]);
          sample_y.push_back(y[at]);
        }
        x = sample_x;
        y = sample_y;
      }
      auto robust = fit_robust(x, y);
      if (robust && differs(result.fit, *robust)) return *robust;
      return std::nullopt;
    });
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    if (!by_size[i].empty()) result.sizes.push_back({sizes[i], summarize(std::move(by_size[i]))});
  if (robust_check.valid()) result.robust_differs = robust_check.get();
  return result;
}

Expected<PendingFit> start_fit_durations(std::span<const Action> actions,
                                         const std::map<uint8_t, double>& size_of_code, FitMethod method) {
  // A robust fit can fail to converge: it is fitted here, where its error can still stop the command.
  if (method == FitMethod::Robust) {
    ETT_TRY_ASSIGN(FitResult whole, fit_durations(actions, size_of_code, method));
    return PendingFit(std::move(whole));
  }
  // A least-squares fit fails only for the points it is given: the sized actions and their sizes, checked
  // here as fit_linear checks them.
  std::array<size_t, 256> count_of_code{};
  for (const Action& action : actions) ++count_of_code[action.start_code];
  size_t points = 0;
  std::optional<double> some_size;
  bool distinct = false;
  for (const auto& [code, size] : size_of_code) {
    if (count_of_code[code] == 0) continue;
    points += count_of_code[code];
    distinct = distinct || (some_size && *some_size != size);
    some_size = size;
  }
  ETT_TRY(check_points(points, distinct));
  return PendingFit(std::async(std::launch::async, [actions, size_of_code] {
    Expected<FitResult> fitted = fit_durations(actions, size_of_code, FitMethod::Linear);
    return fitted ? std::move(*fitted) : FitResult{};  // never empty: its points were checked above
  }));
}

const FitResult& PendingFit::get() {
  if (m_later.valid()) m_result = m_later.get();
  return m_result;
}

}  // namespace ett::host
