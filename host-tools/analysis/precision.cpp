// precision.cpp: loop-step distribution and the pi = tau + epsilon table (ETT paper, sections 4-5).
#include "analysis/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/tsc_time.h"

namespace ett::host {

namespace {
constexpr double kHistogramBodyCoverage = 0.997;  // the histogram's equal bins end here (PrecisionOptions)
}  // namespace

ValueCounts LoopSteps::take() && {
  return std::move(m_steps);
}

void LoopSteps::clear() {
  m_steps.clear();
  m_has_previous = false;
}

std::vector<double> loop_steps_ns(const Capture& capture) {
  std::vector<double> steps;
  bool has_previous = false;
  uint64_t previous = 0;
  for (const AnalysisEvent& event : capture.events) {
    if (has_previous && event.tsc > previous)
      steps.push_back(ticks_to_ns(static_cast<double>(event.tsc - previous), capture.info.tsc_hz));
    previous = event.tsc;
    has_previous = true;
  }
  return steps;
}

const char* precision_source_name(PrecisionSource source) {
  return source == PrecisionSource::Calibrate ? "calibrate" : "check-intervals";
}

Expected<PrecisionResult> precision_from_check_intervals(const CaptureInfo& info) {
  if (info.tsc_hz == 0) return make_error(ErrorKind::Usage, "the capture has no TSC rate (tsc_hz = 0)");
  if (info.typical_check_ns <= 0 || info.longest_check_ns <= 0)
    return make_error(
        ErrorKind::Usage,
        fmt::format("{} was captured with mode={} and recorded no check intervals (a session before "
                    "format version 2, or a synthetic one): the loop-step bound needs a mode=calibrate "
                    "capture, or a capture by a kernel that records its check intervals",
                    info.name.empty() ? "the capture" : info.name, info.mode));
  constexpr double kPollsPerCheck = 1024;
  PrecisionResult result;
  result.source = PrecisionSource::CheckIntervals;
  result.steps = info.loop_iterations;
  result.tsc_hz = info.tsc_hz;
  result.epsilon_ns = ns_per_tick(info.tsc_hz);
  result.probe_count = info.probe_count;
  result.typical_check_ns = info.typical_check_ns;
  result.longest_check_ns = info.longest_check_ns;
  result.stall_threshold_ns = info.stall_threshold_ns;
  result.stall_count = info.stall_count;
  const double typical_poll = info.typical_check_ns / kPollsPerCheck;
  const double rest = info.typical_check_ns - typical_poll;  // 1023 typical polls
  const std::vector<double> typical_steps = {typical_poll};
  result.step = summarize(typical_steps);
  result.step.max = std::max(typical_poll, info.longest_check_ns - rest);
  CoverageLevel level;
  level.coverage = 1.0;
  level.tau_ns = result.step.max;
  level.epsilon_ns = result.epsilon_ns;
  level.pi_ns = level.tau_ns + level.epsilon_ns;
  level.steps_within = result.steps;
  level.min_interarrival_ns = level.tau_ns;
  result.levels.push_back(level);
  result.tau_outside_stalls_ns =
      std::max(typical_poll, std::min(info.longest_check_ns, info.stall_threshold_ns) - rest);
  return result;
}

Expected<PrecisionResult> analyze_precision(const Capture& capture, const PrecisionOptions& options) {
  if (capture.info.tsc_hz == 0)
    return make_error(ErrorKind::Usage, "the capture has no TSC rate (tsc_hz = 0)");
  if (capture.info.mode != "calibrate") return precision_from_check_intervals(capture.info);
  LoopSteps steps(capture.info.tsc_hz);
  for (const AnalysisEvent& event : capture.events) steps.add(event.tsc);
  ValueCounts counts = std::move(steps).take();
  return precision_from_steps(counts, capture.info.tsc_hz, capture.info.probe_count, options);
}

Expected<PrecisionResult> precision_from_steps(const std::vector<double>& steps_ns, uint64_t tsc_hz,
                                               int probe_count, const PrecisionOptions& options) {
  ValueCounts counts;
  for (double step : steps_ns) counts.add(step);
  return precision_from_steps(counts, tsc_hz, probe_count, options);
}

Expected<PrecisionResult> precision_from_steps(ValueCounts& steps, uint64_t tsc_hz, int probe_count,
                                               const PrecisionOptions& options) {
  if (steps.count() == 0) return make_error(ErrorKind::Usage, "the calibration capture has no loop steps");
  if (tsc_hz == 0) return make_error(ErrorKind::Usage, "the capture has no TSC rate (tsc_hz = 0)");
  for (double coverage : options.coverages)
    if (!(coverage > 0 && coverage <= 1))
      return make_error(ErrorKind::Usage, fmt::format("coverage {} is not in (0, 1]", coverage));
  PrecisionResult result;
  result.steps = steps.count();
  result.tsc_hz = tsc_hz;
  result.epsilon_ns = ns_per_tick(tsc_hz);
  result.probe_count = probe_count;
  result.step = summarize(steps);
  for (double coverage : options.coverages) {
    CoverageLevel level;
    level.coverage = coverage;
    level.tau_ns = steps.quantile(coverage);
    level.epsilon_ns = result.epsilon_ns;
    level.pi_ns = level.tau_ns + level.epsilon_ns;
    level.steps_within = steps.count_at_most(level.tau_ns);
    level.min_interarrival_ns = level.tau_ns;
    result.levels.push_back(level);
  }
  const int bins = std::max(1, options.bins);
  const double lo = result.step.min, hi = result.step.max;
  const double quantile = steps.quantile(kHistogramBodyCoverage);
  const double body_hi = quantile > lo && quantile < hi ? quantile : hi;
  const double width = body_hi > lo ? (body_hi - lo) / bins : 1.0;
  const int used = body_hi > lo ? bins : 1;
  for (int i = 0; i < used; ++i) result.histogram.push_back({lo + i * width, lo + (i + 1) * width, 0});
  if (body_hi < hi) result.histogram.push_back({body_hi, hi, 0, true});
  for (const ValueCount& step : steps.counts()) {
    if (step.value > body_hi) {
      result.histogram.back().count += step.count;
      continue;
    }
    int bin = static_cast<int>((step.value - lo) / width);
    result.histogram[static_cast<size_t>(std::clamp(bin, 0, used - 1))].count += step.count;
  }
  return result;
}

}  // namespace ett::host
