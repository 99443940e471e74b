// fit.cpp: least-squares duration = a + b * size through gsl_fit_linear, and the per-size table.
#include "analysis/fit.h"

#include <fmt/format.h>
#include <gsl/gsl_fit.h>

#include <charconv>
#include <cmath>
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

Expected<LinearFit> fit_linear(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 3)
    return make_error(ErrorKind::Usage,
                      fmt::format("a linear fit needs at least 3 points, got {}", x.size()));
  bool distinct = false;
  for (double v : x) distinct = distinct || v != x[0];
  if (!distinct) return make_error(ErrorKind::Usage, "a linear fit needs at least two different sizes");
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

Expected<FitResult> fit_durations(std::span<const Action> actions,
                                  const std::map<uint8_t, double>& size_of_code) {
  FitResult result;
  std::map<double, std::vector<double>> by_size;
  for (const Action& action : actions) {
    auto it = size_of_code.find(action.start_code);
    if (it == size_of_code.end()) {
      result.actions_without_size++;
      continue;
    }
    result.x.push_back(it->second);
    result.y.push_back(action.duration_ns);
    by_size[it->second].push_back(action.duration_ns);
  }
  auto fit = fit_linear(result.x, result.y);
  if (!fit) return fit.failure();
  result.fit = *fit;
  for (const auto& [size, durations] : by_size) result.sizes.push_back({size, summarize(durations)});
  return result;
}

}  // namespace ett::host
