// pps_align.cpp: alignment of captures through their PPS UTC mappings (pps_align.h).
#include "analysis/pps_align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/stats.h"
#include "common/row_cursor.h"

namespace ett::host {

namespace {

// Seconds since the mapping's pulse 0 (utc_second) of a TSC value: small, so a double keeps far below 1 ns.
double seconds_since_label(const PpsResult& m, double tsc) {
  return (tsc - m.anchor_tsc) / m.tsc_hz;
}

// The UTC seconds of the capture's pulses on the mapping's line (rising edges), and how far each pulse
// lies from its whole second, in ns, by the mapping.
std::map<int64_t, double> pulse_offsets(const Capture& capture, const PpsResult& m) {
  std::map<int64_t, double> offsets;
  const auto bit = static_cast<uint8_t>(1u << m.line);
  bool level = capture.info.initial_lines & bit;
  for (const AnalysisEvent& event : capture.events) {
    const bool now = event.lines & bit;
    if (now && !level) {
      const double since = seconds_since_label(m, static_cast<double>(event.tsc));
      const double whole = std::round(since);
      if (std::abs(since - whole) < 0.01)
        offsets[*m.utc_second + static_cast<int64_t>(whole)] = (since - whole) * 1e9;
    }
    level = now;
  }
  return offsets;
}

double percentile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

}  // namespace

Expected<PpsAlignResult> align_by_pps(std::span<const Capture> captures,
                                      std::span<const PpsResult> mappings) {
  if (captures.size() < 2 || mappings.size() != captures.size())
    return make_error(ErrorKind::Usage, "align --pps needs two or more traces, each with its PPS mapping");
  for (size_t k = 0; k < captures.size(); ++k)
    if (!mappings[k].utc_second || mappings[k].tsc_hz <= 0 || captures[k].info.tsc_hz == 0)
      return make_error(ErrorKind::Usage,
                        fmt::format("{}: its PPS mapping has no UTC labels: run `ett analyze pps --trace {} "
                                    "--utc-at-edge N=ISO-8601`",
                                    captures[k].info.name, captures[k].info.trace_id));
  PpsAlignResult result;
  const PpsResult& m1 = mappings[0];
  const CaptureInfo& i1 = captures[0].info;
  const double hz1 = static_cast<double>(i1.tsc_hz);
  // UTC(t) in seconds after the reference's label second, for capture time t (ns) of capture k:
  // (U_k - U_1) + (start_k - a_k) / b_k + t * hz_k / (1e9 * b_k).
  auto base_s = [&](size_t k) {
    const PpsResult& m = mappings[k];
    return static_cast<double>(*m.utc_second - *m1.utc_second) +
           (static_cast<double>(captures[k].info.capture_start_tsc) - m.anchor_tsc) / m.tsc_hz;
  };
  const std::map<int64_t, double> reference_pulses = pulse_offsets(captures[0], m1);
  for (size_t k = 0; k < captures.size(); ++k) {
    const PpsResult& m = mappings[k];
    const double hz = static_cast<double>(captures[k].info.tsc_hz);
    PpsClockMap map;
    map.capture = k;
    map.slope = (hz / m.tsc_hz) / (hz1 / m1.tsc_hz);
    map.drift_ppm = (map.slope - 1) * 1e6;
    map.offset_ns = (base_s(k) - base_s(0)) * 1e9 * m1.tsc_hz / hz1;
    std::vector<double> differences, magnitudes;
    int64_t first = 0, last = 0;
    for (const auto& [second, offset] : pulse_offsets(captures[k], m)) {
      auto found = reference_pulses.find(second);
      if (found == reference_pulses.end()) continue;
      if (differences.empty()) first = second;
      last = second;
      differences.push_back(offset - found->second);
      magnitudes.push_back(std::abs(offset - found->second));
    }
    map.seconds = differences.size();
    if (!differences.empty()) {
      double sum = 0;
      for (double d : differences) sum += d;
      map.mean_ns = sum / static_cast<double>(differences.size());
      map.p50_abs_ns = percentile_of(magnitudes, 0.5);
      map.p99_abs_ns = percentile_of(magnitudes, 0.99);
      map.max_abs_ns = percentile_of(magnitudes, 1.0);
    }
    // A rate error of u ppb moves a time half the span from the fit's middle by u * span / 2.
    const double span_s = static_cast<double>(last - first);
    map.uncertainty_ns = std::hypot(m.uncertainty_ppb, m1.uncertainty_ppb) * span_s / 2;
    result.maps.push_back(map);
  }
  std::vector<LinearClock> clocks;
  for (const PpsClockMap& map : result.maps) clocks.push_back(map.clock());
  ETT_TRY_ASSIGN(result.timeline, MergedTimeline::make(captures, clocks));
  return result;
}

Report pps_align_report(const PpsAlignResult& r, std::span<const Capture> captures,
                        std::span<const PpsResult> mappings, std::span<const int64_t> ids,
                        OutputFormat format) {
  if (format == OutputFormat::Csv) {
    ReportPart rows{"trace_id,seq,probe,code,lines,time_ns,ref_time_ns,time_utc\n", r.timeline.size()};
    rows.format_rows = [&r, captures, mappings, ids](size_t begin, size_t end, fmt::memory_buffer& out) {
      IsoUtcWriter iso;
      RowCursor rows(out, end - begin, 96, kMergedRowMax);
      r.timeline.walk(begin, end, [&](const MergedRef& merged) {
        const AnalysisEvent& event = captures[merged.capture].events[merged.event];
        const UtcNs utc = mappings[merged.capture].utc_of_tsc(event.tsc);
        rows.done(write_merged_row(rows.next(), ids[merged.capture], event, r.maps[merged.capture].clock(),
                                   &utc, iso));
      });
    };
    return {std::move(rows)};
  }
  if (format == OutputFormat::Json) {
    auto tenths = [](double v) { return std::round(v * 10) / 10; };
    nlohmann::ordered_json traces = nlohmann::ordered_json::array();
    for (const PpsClockMap& m : r.maps)
      traces.push_back({{"trace_id", ids[m.capture]},
                        {"offset_ns", tenths(m.offset_ns)},
                        {"slope", m.slope},
                        {"drift_ppm", m.drift_ppm},
                        {"seconds", m.seconds},
                        {"disagreement_mean_ns", tenths(m.mean_ns)},
                        {"disagreement_p50_ns", tenths(m.p50_abs_ns)},
                        {"disagreement_p99_ns", tenths(m.p99_abs_ns)},
                        {"disagreement_max_ns", tenths(m.max_abs_ns)},
                        {"uncertainty_ns", tenths(m.uncertainty_ns)}});
    nlohmann::ordered_json doc = {{"method", "pps"}, {"reference", ids[0]}, {"traces", std::move(traces)}};
    return {{doc.dump() + "\n"}};
  }
  std::string out = fmt::format("aligned through UTC (PPS mappings), reference trace {}\n", ids[0]);
  for (size_t k = 1; k < r.maps.size(); ++k) {
    const PpsClockMap& m = r.maps[k];
    out += fmt::format(
        "trace {}: t_ref = {:+.1f} ns + t * {:.12f} (drift {:+.3f} ppm); over {} common seconds the pulses' "
        "UTC disagree by mean {:+.1f} ns, |p50| {:.1f} ns, |p99| {:.1f} ns, |max| {:.1f} ns (rate "
        "uncertainty {:.1f} ns)\n",
        ids[m.capture], m.offset_ns, m.slope, m.drift_ppm, m.seconds, m.mean_ns, m.p50_abs_ns, m.p99_abs_ns,
        m.max_abs_ns, m.uncertainty_ns);
  }
  out += fmt::format("{} events merged\n", r.timeline.size());
  return {{std::move(out)}};
}

std::string format_pps_align(const PpsAlignResult& result, std::span<const Capture> captures,
                             std::span<const PpsResult> mappings, std::span<const int64_t> trace_ids,
                             OutputFormat format) {
  return report_text(pps_align_report(result, captures, mappings, trace_ids, format));
}

}  // namespace ett::host
