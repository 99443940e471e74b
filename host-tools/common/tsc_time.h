// tsc_time.h: TSC ticks to nanoseconds at a capture's stored frequency, the one conversion every stage uses.
#pragma once

#include <cmath>
#include <cstdint>

namespace ett::host {

// round(ticks * 1e9 / hz) exactly, in integer arithmetic, halves away from zero: the time_ns of `ett
// extract`, the database and `ett ls`. Negative ticks (pretrigger events stamped before the capture's start)
// give negative times. `hz` must not be 0.
inline int64_t ticks_to_ns_exact(int64_t ticks, uint64_t hz) {
  const __int128 magnitude = ticks < 0 ? -static_cast<__int128>(ticks) : static_cast<__int128>(ticks);
  const __int128 divisor = hz;
  const __int128 ns = (magnitude * 1'000'000'000 + divisor / 2) / divisor;
  return static_cast<int64_t>(ticks < 0 ? -ns : ns);
}

// The same in double precision, for the analyses (sums and differences of ticks); 0 when `hz` is 0.
inline double ticks_to_ns(double ticks, uint64_t hz) {
  return hz ? ticks * 1e9 / static_cast<double>(hz) : 0;
}

// std::llround(x) (the nearest integer, halves away from zero), computed inline: the exports round every
// event's time, and the library call was 1.6 % of the CPU samples of a 10 M-event protobuf export (`perf
// record`). x less its truncation is exact in double arithmetic, so the comparison with one half is too. From
// 2^62 on (and for NaN) it is std::llround's own result.
inline int64_t round_to_int64(double x) {
  if (!(std::fabs(x) < 0x1p62)) return std::llround(x);
  int64_t whole = static_cast<int64_t>(x);
  const double fraction = x - static_cast<double>(whole);
  if (fraction >= 0.5) ++whole;
  if (fraction <= -0.5) --whole;
  return whole;
}

// The TSC stamp `time_ns` after the capture start at `start_tsc` (ticks_to_ns undone, to the nearest tick):
// a time kept in ns (an action's start or end) taken back to the stamp it came from, for the PPS mapping.
inline uint64_t tsc_at(double time_ns, uint64_t start_tsc, uint64_t hz) {
  return start_tsc + static_cast<uint64_t>(round_to_int64(time_ns * static_cast<double>(hz) / 1e9));
}

// One TSC tick in nanoseconds (the quantization step epsilon of a capture); 0 when `hz` is 0.
inline double ns_per_tick(uint64_t hz) {
  return hz ? 1e9 / static_cast<double>(hz) : 0;
}

}  // namespace ett::host
