// capture_loop.h: the hot loop: poll the lines, and on a change timestamp it and record one event per probe.
//
// Built once per layout (a template parameter), so the probe split is unrolled into constants. The idle step
// is: read the byte, compare it with the last one, count down, branch. Only a change reads the clock (ordered
// after the read) and stores records. The stop rules are consulted every 2^kPollIntervalLog2 polls; the stop
// check also keeps the capture's check-to-check intervals and stalls (stall_log.h).
//
// Source and Clock are small handles, copied in so that the compiler keeps them in registers. The kernel's
// sources bring the idle step in assembly (arch/x86/idle_poll.h), so that it is the same in every layout,
// source, clock and filter setting, every operand in a register:
//     1: movzbl (%eax),%ecx        ; read the lines (probe=lpt: in (%dx),%al)
//        cmp    %ebx,%ecx          ; same as last time?
//        jne    2f                 ; changed: leave the idle step
//        dec    %ebp               ; count down to the next stop check
//        jne    1b
//     2: ...                       ; a change: lfence; rdtsc; one 16-byte record per changed probe
// With filter= (kFiltered) the byte is copied and masked before the compare (movzbl/mov + and): 7
// instructions. Which registers hold what differs between instantiations; the shape does not.
// trigger= runs a separate wait loop first (wait_for_trigger; the pre-trigger ring lives only there), so the
// capture loop proper is the same with or without a trigger. stop=zero / stop=code:P:C are checked per
// recorded event, on the change path only. tests/kernel/hot_loop_check.sh disassembles every instantiation
// in ett-kernel.elf, finds the idle step and checks its instructions and that it touches no memory but the
// probe read; it also fails on a call (but the trigger wait and the stall recorder) or a loop that has grown.
#pragma once

#include <stdint.h>

#include "capture/event_buffer.h"
#include "capture/event_stop.h"
#include "capture/pretrigger_ring.h"
#include "capture/trit_pattern.h"
#include "ett/probe_layout.h"
#include "ett/trace_format.h"

namespace ett::capture {

// What the command line chose for a capture beyond the layout.
struct CaptureOptions {
  uint8_t filter_mask = 0xFF;  // filter=: only changes on these lines give events (used when kFiltered)
  bool trigger_enabled = false;
  TritPattern trigger;      // trigger=: recording starts when the eight lines match
  uint32_t pretrigger = 0;  // pretrigger=N: the last N events before the trigger are kept
  EventStop event_stop = EventStop::none();
};

struct CaptureResult {
  uint64_t event_count;
  uint64_t start_tsc;   // time 0: when the initial lines were read, or when the trigger matched
  uint64_t armed_tsc;   // when the initial lines were read (== start_tsc without a trigger)
  uint64_t end_tsc;     // when the loop stopped
  uint64_t iterations;  // polls of the source after the initial read (trigger wait included)
  format::StopReason stop_reason;
  uint8_t initial_lines;  // goes into the session header, not into the events
  uint8_t final_lines;
  bool triggered;              // trigger= matched (false without a trigger)
  uint64_t pretrigger_events;  // events at the front of the buffer from before the trigger
};

namespace detail {

inline uint32_t saturate32(uint64_t value) {
  return value > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(value);
}

// The idle step: polls until the lines under `mask` differ from `last` or the countdown reaches 0, and
// returns the last byte read (on a change the countdown is left for the caller to count). The kernel's
// sources bring their own in assembly (arch/x86/idle_poll.h), so that it is the same few instructions in
// every instantiation; a source without one (the host tests' scripted source) gets the same loop in C++.
template <bool kFiltered, typename Source>
[[gnu::always_inline]] inline uint8_t idle_poll(const Source& source, uint32_t last, uint32_t mask,
                                                uint32_t& countdown) {
  if constexpr (requires { source.template idle<kFiltered>(last, mask, countdown); }) {
    return source.template idle<kFiltered>(last, mask, countdown);
  } else {
    for (;;) {
      const uint8_t raw = source.read();
      if ((raw & mask) != last || --countdown == 0) return raw;
    }
  }
}

// Polls counted by a loop that checks its stop rules every `interval` polls.
inline uint64_t polls(uint64_t checks, uint32_t interval, uint32_t countdown) {
  return checks * interval + (interval - countdown);
}

struct TriggerWait {
  bool triggered;
  format::StopReason stop_reason;  // why the capture ends right away (None: go on capturing)
  uint64_t trigger_tsc;
  uint8_t lines;  // the lines that matched
  uint64_t polls;
  uint64_t ring_events;
};

// The trigger wait: the same poll, but every change is compared with the pattern, and filtered changes go
// into the pre-trigger ring. On the match, the ring is put in order at the front of the buffer and the
// matching change's own events follow it (they are the first events at time 0).
template <format::Layout kLayout, typename Source, typename Clock, typename StopCheck>
[[gnu::noinline, gnu::flatten]] TriggerWait wait_for_trigger(Source source, Clock clock, StopCheck& stop,
                                                             EventBuffer& buffer,
                                                             const CaptureOptions& options,
                                                             uint8_t filter_mask, uint8_t initial) {
  constexpr format::LineSplit layout = format::line_split(kLayout);
  constexpr uint32_t kInterval = 1u << StopCheck::kPollIntervalLog2;
  const size_t room = buffer.capacity() - buffer.size();
  PretriggerRing ring(buffer.next(), options.pretrigger < room ? options.pretrigger : room - 1);
  uint32_t last = initial;
  uint32_t countdown = kInterval;
  uint64_t checks = 0;
  TriggerWait wait{};
  for (;;) {
    const uint8_t lines = source.read();
    if (lines != last) [[unlikely]] {
      const uint64_t now = clock.now();
      const uint32_t changed = (lines ^ last) & filter_mask;
      last = lines;
      if (options.trigger.matches(lines)) {
        wait.ring_events = ring.linearize();
        buffer.advance(wait.ring_events);
        wait.triggered = true;
        wait.trigger_tsc = now;
        wait.lines = lines;
        wait.polls = polls(checks, kInterval, countdown - 1);
#pragma GCC unroll 8
        for (uint32_t k = 0; k < layout.probe_count; ++k) {
          if (changed & layout.mask(k)) {
            const uint8_t code = layout.code(k, lines);
            buffer.push(now, static_cast<uint8_t>(k + 1), code, lines);
            if (options.event_stop.hit(k, code)) wait.stop_reason = options.event_stop.reason();
            if (buffer.full()) {
              wait.stop_reason = format::StopReason::BufferFull;
              return wait;
            }
          }
        }
        return wait;
      }
      if (ring.capacity() != 0) {
#pragma GCC unroll 8
        for (uint32_t k = 0; k < layout.probe_count; ++k)
          if (changed & layout.mask(k))
            ring.push(now, static_cast<uint8_t>(k + 1), layout.code(k, lines), lines);
      }
    }
    if (--countdown == 0) [[unlikely]] {
      countdown = kInterval;
      ++checks;
      const format::StopReason reason = stop.check();
      if (reason != format::StopReason::None) {
        // Never triggered: the ring's events are kept (in order), so the session shows what did happen.
        wait.ring_events = ring.linearize();
        buffer.advance(wait.ring_events);
        wait.stop_reason = reason;
        wait.lines = static_cast<uint8_t>(last);
        wait.polls = polls(checks, kInterval, countdown);
        return wait;
      }
    }
  }
}

}  // namespace detail

template <format::Layout kLayout, bool kFiltered = false, typename Source, typename Clock, typename StopCheck>
[[gnu::noinline, gnu::flatten]] CaptureResult run_capture(Source source, Clock clock, StopCheck& stop,
                                                          EventBuffer buffer,
                                                          const CaptureOptions& options = CaptureOptions{}) {
  constexpr format::LineSplit layout = format::line_split(kLayout);
  static_assert(layout.probe_count > 0, "unknown layout");
  constexpr uint32_t kInterval = 1u << StopCheck::kPollIntervalLog2;
  // Without a filter the mask is the constant 0xFF and the `and` disappears from the idle step.
  const uint8_t mask = kFiltered ? options.filter_mask : 0xFF;

  CaptureResult result{};
  uint32_t last = source.read();  // a full register: on i686 gcc then keeps it out of memory
  result.initial_lines = static_cast<uint8_t>(last);
  result.start_tsc = clock.now();
  result.armed_tsc = result.start_tsc;
  stop.begin(result.start_tsc);

  uint32_t countdown = kInterval;
  uint64_t checks = 0;
  uint64_t wait_polls = 0;
  if (buffer.full()) {
    result.stop_reason = format::StopReason::BufferFull;
    goto stopped;
  }
  if (options.trigger_enabled) {
    if (!options.trigger.matches(static_cast<uint8_t>(last))) {
      const detail::TriggerWait wait = detail::wait_for_trigger<kLayout>(source, clock, stop, buffer, options,
                                                                         mask, static_cast<uint8_t>(last));
      wait_polls = wait.polls;
      result.pretrigger_events = wait.ring_events;
      last = wait.lines;
      result.stop_reason = wait.stop_reason;
      if (!wait.triggered) goto stopped;
      result.triggered = true;
      result.start_tsc = wait.trigger_tsc;
      if (wait.stop_reason != format::StopReason::None) goto stopped;
    } else {
      result.triggered = true;  // the lines matched from the start
    }
  }
  last &= mask;
  for (;;) {
    const uint8_t raw = detail::idle_poll<kFiltered>(source, last, mask, countdown);
    const uint8_t lines = raw & mask;
    if (lines != last) [[unlikely]] {
      const uint64_t now = clock.now();
      const uint32_t changed = lines ^ last;
      last = lines;
#pragma GCC unroll 8
      for (uint32_t k = 0; k < layout.probe_count; ++k) {
        if (changed & layout.mask(k)) {
          const uint8_t code = layout.code(k, raw);
          buffer.push(now, static_cast<uint8_t>(k + 1), code, raw);
          if (options.event_stop.hit(k, code)) result.stop_reason = options.event_stop.reason();
          if (buffer.full()) [[unlikely]] {
            result.stop_reason = format::StopReason::BufferFull;
            break;
          }
        }
      }
      if (result.stop_reason != format::StopReason::None) [[unlikely]] {
        --countdown;  // this poll counts too
        goto stopped;
      }
      if (--countdown != 0) continue;  // the change's poll is counted like any other
    }
    countdown = kInterval;  // the idle step counted down to 0: time for the stop check
    ++checks;
    result.stop_reason = stop.check();
    if (result.stop_reason != format::StopReason::None) break;
  }
stopped:
  result.end_tsc = clock.now();
  result.final_lines = kFiltered ? source.read() : static_cast<uint8_t>(last);
  result.event_count = buffer.size();
  result.iterations = wait_polls + detail::polls(checks, kInterval, countdown);
  return result;
}

// mode=calibrate, the ETT paper's section 5 method: every loop step records an event, so the differences
// between consecutive records are the step times (aux holds them too). The step is the capture loop's
// (read the lines, read the clock ordered after the read, store a record, bounds check, countdown), plus the
// unconditional store; every 2^kPollIntervalLog2-th step also runs the stop checks, as in a capture.
template <typename Source, typename Clock, typename StopCheck>
[[gnu::noinline, gnu::flatten]] CaptureResult run_calibrate(Source source, Clock clock, StopCheck& stop,
                                                            EventBuffer buffer) {
  constexpr uint32_t kInterval = 1u << StopCheck::kPollIntervalLog2;
  CaptureResult result{};
  uint8_t lines = source.read();
  result.initial_lines = lines;
  result.start_tsc = clock.now();
  result.armed_tsc = result.start_tsc;
  stop.begin(result.start_tsc);
  uint64_t previous = result.start_tsc;
  uint32_t countdown = kInterval;
  uint64_t checks = 0;
  if (buffer.full()) {
    result.stop_reason = format::StopReason::BufferFull;
  } else {
    for (;;) {
      lines = source.read();
      const uint64_t now = clock.now();
      buffer.push(now, 0, lines, lines, detail::saturate32(now - previous));
      previous = now;
      if (buffer.full()) [[unlikely]] {
        result.stop_reason = format::StopReason::BufferFull;
        --countdown;
        break;
      }
      if (--countdown == 0) [[unlikely]] {
        countdown = kInterval;
        ++checks;
        result.stop_reason = stop.check();
        if (result.stop_reason != format::StopReason::None) break;
      }
    }
  }
  result.end_tsc = clock.now();
  result.final_lines = lines;
  result.event_count = buffer.size();
  result.iterations = detail::polls(checks, kInterval, countdown);
  return result;
}

// mode=hwlat: spin on the clock alone and record every gap between consecutive reads longer than
// `threshold_ticks` (tsc = the read before the gap, aux = the gap in ticks). The stop checks' own time is
// not a gap: the clock is read afresh after each check.
template <typename Clock, typename StopCheck>
[[gnu::noinline, gnu::flatten]] CaptureResult run_hwlat(Clock clock, StopCheck& stop, EventBuffer buffer,
                                                        uint64_t threshold_ticks) {
  constexpr uint32_t kInterval = 1u << StopCheck::kPollIntervalLog2;
  CaptureResult result{};
  result.start_tsc = clock.now();
  result.armed_tsc = result.start_tsc;
  stop.begin(result.start_tsc);
  uint64_t previous = clock.now();
  uint32_t countdown = kInterval;
  uint64_t checks = 0;
  if (buffer.full()) {
    result.stop_reason = format::StopReason::BufferFull;
  } else {
    for (;;) {
      const uint64_t now = clock.now();
      if (now - previous > threshold_ticks) [[unlikely]] {
        buffer.push(previous, 0, 0, 0, detail::saturate32(now - previous));
        if (buffer.full()) {
          result.stop_reason = format::StopReason::BufferFull;
          --countdown;
          break;
        }
      }
      previous = now;
      if (--countdown == 0) [[unlikely]] {
        countdown = kInterval;
        ++checks;
        result.stop_reason = stop.check();
        if (result.stop_reason != format::StopReason::None) break;
        previous = clock.now();
      }
    }
  }
  result.end_tsc = clock.now();
  result.event_count = buffer.size();
  result.iterations = detail::polls(checks, kInterval, countdown);
  return result;
}

// The floor for the benchmark (and the typical stop-check interval for the stall log): the idle step itself
// (read, compare, count down, branch; the same instructions as in every unfiltered run_capture) run for
// `polls` polls, no stop check; returns the TSC ticks it took, or 0 if the lines changed meanwhile.
template <typename Source, typename Clock>
[[gnu::noinline]] uint64_t bare_poll_ticks(Source source, Clock clock, uint32_t polls) {
  const uint8_t first = source.read();
  uint32_t countdown = polls;
  const uint64_t start = clock.now();
  detail::idle_poll<false>(source, first, 0xFF, countdown);
  const uint64_t end = clock.now();
  return countdown == 0 ? end - start : 0;
}

// The loop benchmark's floor: the idle step (the same instructions as in every unfiltered run_capture) in
// rounds of `round_polls` polls with one read of `clock` between rounds, until `window_ticks` have passed --
// the capture loop without the rest of its stop check. Ends at the first round after the deadline, as the
// capture loop ends at the first stop check after limit=. polls = 0 if the lines changed meanwhile.
struct PollWindow {
  uint64_t polls;
  uint64_t ticks;
  uint64_t shortest_round;  // ticks of the fastest and the slowest round: a round far slower than the
  uint64_t longest_round;   // fastest held a stall (the host, an SMI), as in the capture's stall log
};
template <typename Source, typename Clock>
[[gnu::noinline]] PollWindow bare_poll_window(Source source, Clock clock, uint64_t window_ticks,
                                              uint32_t round_polls) {
  const uint8_t first = source.read();
  const uint64_t start = clock.now();
  uint64_t polls = 0;
  uint64_t now = start;
  PollWindow window{0, 0, UINT64_MAX, 0};
  do {
    const uint64_t before = now;
    uint32_t countdown = round_polls;
    detail::idle_poll<false>(source, first, 0xFF, countdown);
    if (countdown != 0) return PollWindow{0, 0, 0, 0};
    polls += round_polls;
    now = clock.now();
    if (now - before < window.shortest_round) window.shortest_round = now - before;
    if (now - before > window.longest_round) window.longest_round = now - before;
  } while (now - start < window_ticks);
  window.polls = polls;
  window.ticks = now - start;
  return window;
}

}  // namespace ett::capture
