// precision.cpp: loop-step distribution and the pi = tau + epsilon table (ETT paper, sections 4-5).
#include "analysis/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/reserve_hint.h"
#include "common/tsc_time.h"

namespace ett::host {

namespace {
constexpr double kHistogramBodyCoverage = 0.997;  // the histogram's equal bins end here (PrecisionOptions)
}  // namespace

LoopSteps::LoopSteps(uint64_t tsc_hz, uint64_t expected) : m_tsc_hz(tsc_hz) {
  reserve_hint(m_steps, expected);
  m_fault_ahead = FaultAhead::of_block(m_steps.data(), m_steps.capacity() * sizeof(double));
}

void LoopSteps::batch_added() {
  FaultAhead::follow(m_fault_ahead, m_steps.data(), m_steps.size() * sizeof(double));
}

std::vector<double> LoopSteps::take() && {
  m_fault_ahead.reset();
  return std::move(m_steps);
}

void LoopSteps::clear() {
  m_steps.clear();
  m_has_previous = false;
}

std::vector<double> loop_steps_ns(const Capture& capture) {
  LoopSteps steps(capture.info.tsc_hz, capture.events.size());
  for (const AnalysisEvent& event : capture.events) steps.add(event.tsc);
  steps.batch_added();
  return std::move(steps).take();
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
  return precision_from_steps(loop_steps_ns(capture), capture.info.tsc_hz, capture.info.probe_count, options);
}

Expected<PrecisionResult> precision_from_steps(std::vector<double> steps_ns, uint64_t tsc_hz, int probe_count,
                                               const PrecisionOptions& options) {
  if (steps_ns.empty()) return make_error(ErrorKind::Usage, "the calibration capture has no loop steps");
  if (tsc_hz == 0) return make_error(ErrorKind::Usage, "the capture has no TSC rate (tsc_hz = 0)");
  for (double coverage : options.coverages)
    if (!(coverage > 0 && coverage <= 1))
      return make_error(ErrorKind::Usage, fmt::format("coverage {} is not in (0, 1]", coverage));
  PrecisionResult result;
  result.steps = steps_ns.size();
  result.tsc_hz = tsc_hz;
  result.epsilon_ns = ns_per_tick(tsc_hz);
  result.probe_count = probe_count;
  // No sort: the summary and each quantile select their value among the steps (the coverages are few).
  QuantileSelector steps(steps_ns);
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
  for (double step : steps_ns) {
    if (step > body_hi) {
      result.histogram.back().count++;
      continue;
    }
    int bin = static_cast<int>((step - lo) / width);
    result.histogram[static_cast<size_t>(std::clamp(bin, 0, used - 1))].count++;
  }
  return result;
}

}  // namespace ett::host
