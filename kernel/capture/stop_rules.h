// stop_rules.h: the capture loop's StopCheck: a stop request from the host, the limit= deadline, a key.
#pragma once

#include <stdint.h>

#include "capture/stall_log.h"
#include "ett/trace_format.h"

namespace ett::capture {

// No keyboard check (keyboard=1 not given, or the host tests).
struct NoKeyboard {
  bool new_key_press() { return false; }
};

// Clock:    uint64_t now() (TSC ticks).
// Host:     void capture_started(uint64_t start_tsc)  -- the initial lines are sampled; tell the host
//           bool stop_requested()
// Keyboard: bool new_key_press()  -- consulted only when keyboard=1 asked for it; may consume what it reads
template <typename Clock, typename Host, typename Keyboard = NoKeyboard>
class StopRules {
 public:
  // The loop consults check() once every 2^kPollIntervalLog2 polls: ~20-40 us under QEMU, ~1 ms on a
  // parallel port; how late a stop request, the deadline or a key is noticed, never how late an event is.
  // The check is the slowest step of the loop: with keyboard=1 it adds one read of the PS/2 controller's
  // status port (an I/O cycle on the LPC bus, ~1-2 us on real PCs; measured under QEMU in docs/benchmarks.md).
  static constexpr uint32_t kPollIntervalLog2 = 10;

  // limit_ticks == 0: no deadline.
  StopRules(Clock& clock, Host& host, uint64_t limit_ticks, Keyboard* keyboard = nullptr)
      : m_clock(clock), m_host(host), m_keyboard(keyboard), m_limit_ticks(limit_ticks) {}

  // What a stall is for this capture (stall_log.h): a typical check interval measured just before it (0:
  // none) and the floor, both in ticks.
  void set_stall_reference(uint64_t typical_ticks, uint64_t floor_ticks) {
    m_stall_seed = typical_ticks;
    m_stall_floor = floor_ticks;
  }

  void begin(uint64_t start_tsc) {
    m_deadline = m_limit_ticks != 0 ? start_tsc + m_limit_ticks : UINT64_MAX;
    m_stalls.begin(start_tsc, m_stall_seed, m_stall_floor);
    m_host.capture_started(start_tsc);
  }

  // The clock is read first, so that the check-to-check intervals do not depend on which rule is asked.
  format::StopReason check() {
    const uint64_t now = m_clock.now();
    m_stalls.note(now);
    if (m_host.stop_requested()) return format::StopReason::HostRequest;
    if (now >= m_deadline) return format::StopReason::Deadline;
    if (m_keyboard != nullptr && m_keyboard->new_key_press()) return format::StopReason::Keyboard;
    return format::StopReason::None;
  }

  StallLog& stalls() { return m_stalls; }
  const StallLog& stalls() const { return m_stalls; }

 private:
  Clock& m_clock;
  Host& m_host;
  Keyboard* m_keyboard;
  uint64_t m_limit_ticks;
  uint64_t m_deadline = UINT64_MAX;
  uint64_t m_stall_seed = 0;
  uint64_t m_stall_floor = 0;
  StallLog m_stalls;
};

}  // namespace ett::capture
