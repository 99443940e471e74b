// capture_loop.h: the hot loop: poll the lines, and on a change timestamp it and record one event per probe.
//
// Built once per layout (a template parameter), so the probe split is unrolled into constants. The idle step
// is: read the byte, compare it with the last one, count down, branch. Only a change reads the clock (ordered
// after the read) and stores records. The stop rules are consulted every 2^kPollIntervalLog2 polls.
//
// Source and Clock are small handles, copied in so that the compiler keeps them in registers. The idle step as
// gcc 12 -O2 builds it for i686 (layout 2x4; no call and no TSC read anywhere but on a change):
//     idle: dec    %esi            ; count down to the next stop check
//           je     check
//     loop: movzbl (%ebp),%edi     ; read the lines
//           cmp    %ebx,%edi       ; same as last time?
//           mov    %edi,%ecx
//           je     idle
//           lfence                 ; changed: timestamp it, then one 16-byte record per changed probe
//           rdtsc
//           ...
// 1x8 is the same; 8x1 keeps the countdown and 4x2 the probe pointer on the stack (register pressure).
#pragma once

#include <stdint.h>

#include "capture/event_buffer.h"
#include "capture/layout.h"
#include "ett/trace_format.h"

namespace ett::capture {

struct CaptureResult {
  uint64_t event_count;
  uint64_t start_tsc;   // when the initial lines were read: time 0
  uint64_t end_tsc;     // when the loop stopped
  uint64_t iterations;  // polls of the source after the initial read
  format::StopReason stop_reason;
  uint8_t initial_lines;  // goes into the session header, not into the events
  uint8_t final_lines;
};

template <format::Layout kLayout, typename Source, typename Clock, typename StopCheck>
[[gnu::noinline, gnu::flatten]] CaptureResult run_capture(Source source, Clock clock, StopCheck& stop,
                                                          EventBuffer buffer) {
  constexpr ProbeLayout layout = probe_layout(kLayout);
  static_assert(layout.probe_count > 0, "unknown layout");
  constexpr uint32_t kInterval = 1u << StopCheck::kPollIntervalLog2;

  CaptureResult result{};
  uint32_t last = source.read();  // a full register: on i686 gcc then keeps it out of memory
  result.initial_lines = static_cast<uint8_t>(last);
  result.start_tsc = clock.now();
  stop.begin(result.start_tsc);

  uint32_t countdown = kInterval;
  uint64_t checks = 0;
  if (buffer.full()) {
    result.stop_reason = format::StopReason::BufferFull;
    goto stopped;
  }
  for (;;) {
    const uint8_t lines = source.read();
    if (lines != last) [[unlikely]] {
      const uint64_t now = clock.now();
      const uint32_t changed = lines ^ last;
      last = lines;
#pragma GCC unroll 8
      for (uint32_t k = 0; k < layout.probe_count; ++k) {
        if (changed & layout.mask(k)) {
          buffer.push(now, static_cast<uint8_t>(k + 1), layout.code(k, lines), lines);
          if (buffer.full()) [[unlikely]] {
            result.stop_reason = format::StopReason::BufferFull;
            --countdown;  // this poll counts too
            goto stopped;
          }
        }
      }
    }
    if (--countdown == 0) [[unlikely]] {
      countdown = kInterval;
      ++checks;
      result.stop_reason = stop.check();
      if (result.stop_reason != format::StopReason::None) break;
    }
  }
stopped:
  result.end_tsc = clock.now();
  result.final_lines = static_cast<uint8_t>(last);
  result.event_count = buffer.size();
  result.iterations = checks * kInterval + (kInterval - countdown);
  return result;
}

}  // namespace ett::capture
