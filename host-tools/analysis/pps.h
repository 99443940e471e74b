// pps.h: a GPS receiver's pulse-per-second on one data line turns TSC stamps into UTC. The 1 Hz edges are
// found, missing and extra pulses are rejected with a reason, TSC = a + b * k is fitted by least squares over
// the pulse numbers k, and the pulses get their UTC seconds from the capture's CMOS start time (when that is
// unambiguous) or from the user.
//
// A receiver's PPS marks each UTC second within tens of nanoseconds, so b is the TSC rate against true
// seconds (crystal offset and drift included) with a ppb-class uncertainty, and the residuals are the
// receiver's jitter plus the capture loop's step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/capture.h"
#include "common/status.h"
#include "common/utc_time.h"

namespace ett::host {

struct PpsOptions {
  int line = 7;        // D0..D7 (a serial port's: D0..D3, parse_line_name)
  bool rising = true;  // the edge that marks the second (most receivers: rising)
  double grid_tolerance_ns =
      10e6;               // an edge further than this from a whole second after the previous pulse is extra
  double outlier_ns = 0;  // residuals beyond this are rejected after the first fit (0: 10 x the MAD-based
                          // sigma, at least 1 us)
  // --utc-at-edge N=ISO: pulse N (1-based, among the accepted pulses) is this UTC second.
  std::optional<std::pair<size_t, int64_t>> utc_at_pulse;
  uint64_t captured_at_unix = 0;  // the capture's CMOS start time (0: unknown)
  double cmos_margin_s =
      0.1;  // the CMOS label is ambiguous when the first pulse falls this close to a second
};

struct PpsRejection {
  uint64_t seq = 0;
  uint64_t tsc = 0;
  std::string reason;
};

struct PpsPulse {
  uint64_t seq = 0;
  uint64_t tsc = 0;
  int64_t number = 0;      // k: whole seconds since the first accepted pulse
  double residual_ns = 0;  // tsc - (a + b * k), in ns
};

struct PpsResult {
  int line = 7;
  uint32_t probe_source = 0;           // the capture's, for the line's name (line_name: "D7", "DCD")
  std::vector<PpsPulse> pulses;        // accepted
  std::vector<PpsRejection> rejected;  // with the reason
  int64_t missing = 0;                 // whole seconds with no pulse between accepted ones
  double tsc_hz = 0;                   // b
  double tsc_hz_stderr = 0;            // from the fit
  double uncertainty_ppb = 0;          // tsc_hz_stderr / tsc_hz * 1e9
  double anchor_tsc = 0;               // a: the fitted TSC of pulse k = 0
  double header_tsc_hz = 0;            // the capture's own calibration, for comparison
  double jitter_p50_ns = 0, jitter_p99_ns = 0, jitter_max_ns = 0;  // |residual|
  // UTC: pulse k = 0 is second `utc_second`, labelled from "cmos" or "user"; empty when neither could label
  // it.
  std::optional<int64_t> utc_second;
  std::string label_source;  // "cmos", "user", or "" (unlabelled)
  std::string label_note;    // why the CMOS label was not used, when it was not

  // The UTC instant of a TSC value (needs utc_second). Every UTC time ETT prints comes from here.
  UtcNs utc_of_tsc(uint64_t tsc) const;
  // The same for a time in ns from the capture's start (its capture_start_tsc and calibrated tsc_hz, which
  // turned ticks into that time).
  UtcNs utc_of_capture_ns(double time_ns, uint64_t capture_start_tsc, uint64_t capture_tsc_hz) const;
};

// `--line TEXT` for the capture: D0..D7, DCD|DSR|CTS|RI when it came from a serial port, or the number of a
// one-line probe (parse_line_name); a name its source does not have is a usage error.
Expected<int> pps_line(const CaptureInfo& info, std::string_view text);

// Errors: fewer than three accepted pulses, a bad line, an --utc-at-edge beyond the pulses.
Expected<PpsResult> analyze_pps(const Capture& capture, const PpsOptions& options);

// "2026-11-23T16:00:05Z" (or "+00:00", or no zone: UTC) to seconds since 1970; whole seconds only.
Expected<int64_t> parse_utc_second(std::string_view text);
// "N=2026-11-23T16:00:05Z"
Expected<std::pair<size_t, int64_t>> parse_utc_at_edge(std::string_view text);

}  // namespace ett::host
