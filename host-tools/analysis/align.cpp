// align.cpp: clock offset and drift between captures from their shared sync edges, and the merge.
#include "analysis/align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/fit.h"

namespace ett::host {

namespace {

std::vector<double> sync_times(const Capture& capture, uint8_t probe) {
  std::vector<double> times;
  for (const AnalysisEvent& event : capture.events)
    if (event.probe == probe) times.push_back(event.time_ns);
  return times;
}

std::string capture_name(const Capture& capture, size_t index) {
  return capture.info.name.empty() ? fmt::format("capture {}", index + 1) : capture.info.name;
}

}  // namespace

Expected<AlignResult> align_captures(std::span<const Capture> captures, uint8_t sync_probe) {
  if (captures.size() < 2) return make_error(ErrorKind::Usage, "alignment needs at least two captures");
  AlignResult result;
  result.sync_probe = sync_probe;
  size_t total_events = 0;
  for (const Capture& capture : captures) total_events += capture.events.size();
  result.timeline.reserve(total_events);
  const auto by_time = [](const MergedEvent& a, const MergedEvent& b) {
    return a.ref_time_ns < b.ref_time_ns;
  };
  const std::vector<double> reference = sync_times(captures[0], sync_probe);
  if (reference.size() < 3)
    return make_error(ErrorKind::Usage,
                      fmt::format("{} has {} sync edges on probe {}; at least 3 are needed",
                                  capture_name(captures[0], 0), reference.size(), sync_probe));
  for (size_t i = 0; i < captures.size(); ++i) {
    ClockFit fit;
    fit.capture = i;
    fit.edges = reference.size();
    if (i > 0) {
      const std::vector<double> own = sync_times(captures[i], sync_probe);
      if (own.size() != reference.size())
        return make_error(
            ErrorKind::Usage,
            fmt::format("{} has {} sync edges on probe {} but the reference {} has {}: the edges are "
                        "paired in order, so every capture must see the same edges",
                        capture_name(captures[i], i), own.size(), sync_probe, capture_name(captures[0], 0),
                        reference.size()));
      auto line = fit_linear(own, reference);
      if (!line) return line.failure();
      fit.offset_ns = line->intercept_ns;
      fit.slope = line->slope_ns;
      fit.offset_stderr_ns = line->intercept_stderr_ns;
      fit.slope_stderr = line->slope_stderr_ns;
      double squares = 0;
      for (size_t k = 0; k < own.size(); ++k) {
        const double residual = reference[k] - (fit.offset_ns + fit.slope * own[k]);
        fit.residuals_ns.push_back(residual);
        squares += residual * residual;
        fit.max_abs_residual_ns = std::max(fit.max_abs_residual_ns, std::fabs(residual));
      }
      fit.rms_residual_ns = std::sqrt(squares / static_cast<double>(own.size()));
    } else {
      fit.residuals_ns.assign(reference.size(), 0.0);
    }
    fit.drift_ppm = (fit.slope - 1.0) * 1e6;
    const size_t first = result.timeline.size();
    for (const AnalysisEvent& event : captures[i].events)
      result.timeline.push_back({i, event, fit.offset_ns + fit.slope * event.time_ns});
    result.fits.push_back(std::move(fit));
    // The same order as one stable sort of the whole timeline, in linear time: a capture's events are
    // normally in time order already (sorted stably when not), and merging each into the timeline so far
    // keeps the earlier capture first on ties. A stable sort of 10 million merged events took longer than the
    // rest.
    const auto middle = result.timeline.begin() + static_cast<std::ptrdiff_t>(first);
    if (!std::is_sorted(middle, result.timeline.end(), by_time))
      std::stable_sort(middle, result.timeline.end(), by_time);
    std::inplace_merge(result.timeline.begin(), middle, result.timeline.end(), by_time);
  }
  return result;
}

}  // namespace ett::host
