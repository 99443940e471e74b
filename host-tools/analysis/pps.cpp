// pps.cpp: the PPS line's pulses, the TSC rate fitted against them, and their UTC labels.
#include "analysis/pps.h"

#include <fmt/format.h>
#include <gsl/gsl_fit.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>

#include "analysis/stats.h"
#include "common/line_names.h"

namespace ett::host {

namespace {

struct Edge {
  uint64_t seq;
  uint64_t tsc;
};

// The edges of `line` in the wanted direction, in capture order.
std::vector<Edge> line_edges(const Capture& capture, int line, bool rising) {
  std::vector<Edge> edges;
  const uint8_t bit = static_cast<uint8_t>(1u << line);
  bool level = capture.info.initial_lines & bit;
  for (const AnalysisEvent& event : capture.events) {
    const bool now = event.lines & bit;
    if (now != level && now == rising) edges.push_back({event.seq, event.tsc});
    level = now;
  }
  return edges;
}

struct LineFit {
  double a = 0, b = 0, b_stderr = 0;
};

LineFit fit_pulses(const std::vector<PpsPulse>& pulses) {
  std::vector<double> x, y;
  // Relative to the first pulse, so that the doubles keep nanosecond resolution.
  const double origin = static_cast<double>(pulses.front().tsc);
  for (const PpsPulse& p : pulses) {
    x.push_back(static_cast<double>(p.number));
    y.push_back(static_cast<double>(p.tsc) - origin);
  }
  LineFit fit;
  double cov00 = 0, cov01 = 0, cov11 = 0, sumsq = 0;
  gsl_fit_linear(x.data(), 1, y.data(), 1, x.size(), &fit.a, &fit.b, &cov00, &cov01, &cov11, &sumsq);
  fit.a += origin;
  fit.b_stderr = std::sqrt(cov11);
  return fit;
}

void apply_residuals(std::vector<PpsPulse>& pulses, const LineFit& fit) {
  for (PpsPulse& p : pulses)
    p.residual_ns =
        (static_cast<double>(p.tsc) - (fit.a + fit.b * static_cast<double>(p.number))) / fit.b * 1e9;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

UtcNs PpsResult::utc_of_tsc(uint64_t tsc) const {
  return utc_of_capture_ns(0, tsc, 1'000'000'000);
}

UtcNs PpsResult::utc_of_capture_ns(double time_ns, uint64_t capture_start_tsc,
                                   uint64_t capture_tsc_hz) const {
  if (!utc_second || tsc_hz <= 0) return {};
  return TscUtcClock(anchor_tsc, tsc_hz, *utc_second)
      .after_anchor(static_cast<double>(capture_start_tsc) - anchor_tsc +
                    time_ns * static_cast<double>(capture_tsc_hz) / 1e9);
}

Expected<int> pps_line(const CaptureInfo& info, std::string_view text) {
  const ProbeLayout layout = ProbeLayout::from_name(info.layout).value_or(ProbeLayout());
  return parse_line_name(text, info.probe_source, layout, "--line");
}

Expected<PpsResult> analyze_pps(const Capture& capture, const PpsOptions& options) {
  const uint32_t source = capture.info.probe_source;
  if (options.line < 0 || options.line >= line_count(source))
    return make_error(ErrorKind::Usage,
                      fmt::format("--line D{}: the data lines are {}", options.line, lines_phrase(source)));
  if (capture.info.tsc_hz == 0)
    return make_error(ErrorKind::Usage,
                      capture.info.name + " has no TSC rate: its pulses cannot be told apart");
  PpsResult result;
  result.line = options.line;
  result.probe_source = source;
  result.header_tsc_hz = static_cast<double>(capture.info.tsc_hz);
  const std::vector<Edge> edges = line_edges(capture, options.line, options.rising);

  // Walk the edges on the 1 Hz grid: each accepted pulse is a whole number of seconds after the previous one
  // (at the header's rate, good to ~100 ppm: 0.1 ms a second); an edge off the grid, or a second edge within
  // the same second, is rejected.
  const double hz = result.header_tsc_hz;
  for (const Edge& edge : edges) {
    if (result.pulses.empty()) {
      result.pulses.push_back({edge.seq, edge.tsc, 0, 0});
      continue;
    }
    const PpsPulse& last = result.pulses.back();
    const double seconds = static_cast<double>(edge.tsc - last.tsc) / hz;
    const double whole = std::round(seconds);
    const double off_ns = std::abs(seconds - whole) * 1e9;
    if (seconds < 0.5) {
      result.rejected.push_back({edge.seq, edge.tsc,
                                 fmt::format("a second edge {:.3f} ms after pulse {}: doubled", seconds * 1e3,
                                             result.pulses.size())});
    } else if (off_ns > options.grid_tolerance_ns) {
      result.rejected.push_back({edge.seq, edge.tsc,
                                 fmt::format("{:.3f} s after the previous pulse: {:.3f} ms off the 1 Hz grid",
                                             seconds, off_ns / 1e6)});
    } else {
      result.missing += static_cast<int64_t>(whole) - 1;
      result.pulses.push_back({edge.seq, edge.tsc, last.number + static_cast<int64_t>(whole), 0});
    }
  }
  auto too_few = [&] {
    return make_error(
        ErrorKind::Usage,
        fmt::format("{}: {} pulses on {} ({} rejected); a rate needs at least 3", capture.info.name,
                    result.pulses.size(), line_label(source, options.line), result.rejected.size()));
  };
  if (result.pulses.size() < 3) return too_few();

  // Fit, then reject the pulses far off the line (a glitch on the grid) and fit again.
  LineFit fit = fit_pulses(result.pulses);
  apply_residuals(result.pulses, fit);
  std::vector<double> deviations;
  for (const PpsPulse& p : result.pulses) deviations.push_back(std::abs(p.residual_ns));
  std::sort(deviations.begin(), deviations.end());
  const double sigma = 1.4826 * nearest_rank(deviations, 0.5);
  const double limit = options.outlier_ns > 0 ? options.outlier_ns : std::max(10 * sigma, 1000.0);
  std::vector<PpsPulse> kept;
  for (const PpsPulse& p : result.pulses) {
    if (std::abs(p.residual_ns) <= limit) {
      kept.push_back(p);
      continue;
    }
    result.rejected.push_back(
        {p.seq, p.tsc, fmt::format("{:.1f} ns off the fitted line (limit {:.1f} ns)", p.residual_ns, limit)});
  }
  if (kept.size() < 3) return too_few();
  if (kept.size() != result.pulses.size()) {
    // Renumber from the first kept pulse, so that pulse 0 is an accepted one.
    const int64_t first = kept.front().number;
    for (PpsPulse& p : kept) p.number -= first;
    result.pulses = std::move(kept);
    fit = fit_pulses(result.pulses);
    apply_residuals(result.pulses, fit);
  }
  std::sort(result.rejected.begin(), result.rejected.end(),
            [](const PpsRejection& x, const PpsRejection& y) { return x.seq < y.seq; });
  result.missing = result.pulses.back().number + 1 - static_cast<int64_t>(result.pulses.size());
  result.tsc_hz = fit.b;
  result.tsc_hz_stderr = fit.b_stderr;
  result.uncertainty_ppb = fit.b_stderr / fit.b * 1e9;
  result.anchor_tsc = fit.a;
  std::vector<double> jitter;
  for (const PpsPulse& p : result.pulses) jitter.push_back(std::abs(p.residual_ns));
  std::sort(jitter.begin(), jitter.end());
  result.jitter_p50_ns = nearest_rank(jitter, 0.50);
  result.jitter_p99_ns = nearest_rank(jitter, 0.99);
  result.jitter_max_ns = jitter.back();

  // UTC labels. The capture started at a true time T0 in [C, C + 1) when the CMOS said C, so pulse 0, which
  // came d seconds later, is the one whole second in [C + d, C + d + 1): unambiguous unless C + d is within
  // the margin of a whole second (the CMOS read and the start are not the same instant).
  if (options.utc_at_pulse) {
    const auto [n, second] = *options.utc_at_pulse;
    if (n < 1 || n > result.pulses.size())
      return make_error(ErrorKind::Usage,
                        fmt::format("--utc-at-edge {}=...: the capture has accepted pulses 1 to {}", n,
                                    result.pulses.size()));
    result.utc_second = second - result.pulses[n - 1].number;
    result.label_source = "user";
  } else if (options.captured_at_unix == 0) {
    result.label_note = "the capture has no CMOS start time: give --utc-at-edge N=ISO-8601";
  } else {
    const double d = (fit.a - static_cast<double>(capture.info.capture_start_tsc)) / fit.b;
    const double x = static_cast<double>(options.captured_at_unix) + d;
    const double fraction = x - std::floor(x);
    if (fraction < options.cmos_margin_s || fraction > 1 - options.cmos_margin_s) {
      result.label_note = fmt::format(
          "the first pulse came {:.3f} s after the capture's CMOS start second: within {:.1f} s of a whole "
          "second, "
          "its UTC second is ambiguous; give --utc-at-edge N=ISO-8601",
          d, options.cmos_margin_s);
    } else {
      result.utc_second = static_cast<int64_t>(std::ceil(x));
      result.label_source = "cmos";
    }
  }
  return result;
}

Expected<int64_t> parse_utc_second(std::string_view text) {
  auto bad = [&] {
    return make_error(
        ErrorKind::Usage,
        fmt::format("'{}': expected an ISO-8601 UTC time of a whole second, 2026-11-23T16:00:05Z", text));
  };
  std::string_view s = text;
  if (s.ends_with("Z"))
    s.remove_suffix(1);
  else if (s.ends_with("+00:00"))
    s.remove_suffix(6);
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':')
    return bad();
  auto field = [&](size_t at, size_t length, int& out) {
    auto [end, error] = std::from_chars(s.data() + at, s.data() + at + length, out);
    return error == std::errc() && end == s.data() + at + length;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!field(0, 4, year) || !field(5, 2, month) || !field(8, 2, day) || !field(11, 2, hour) ||
      !field(14, 2, minute) || !field(17, 2, second))
    return bad();
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return bad();
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         hour * 3600 + minute * 60 + second;
}

Expected<std::pair<size_t, int64_t>> parse_utc_at_edge(std::string_view text) {
  const size_t equals = text.find('=');
  size_t n = 0;
  if (equals == std::string_view::npos ||
      std::from_chars(text.data(), text.data() + equals, n).ptr != text.data() + equals || n == 0)
    return make_error(
        ErrorKind::Usage,
        fmt::format("--utc-at-edge '{}': expected N=ISO-8601 (pulse N, from 1, is that UTC second)", text));
  ETT_TRY_ASSIGN(int64_t second, parse_utc_second(text.substr(equals + 1)));
  return std::pair<size_t, int64_t>{n, second};
}

}  // namespace ett::host
