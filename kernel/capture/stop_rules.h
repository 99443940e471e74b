// stop_rules.h: the capture loop's StopCheck: a stop request from the host, and the limit= deadline.
#pragma once

#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::capture {

// Clock: uint64_t now() (TSC ticks).
// Host:  void capture_started(uint64_t start_tsc)  -- the initial lines are sampled; tell the host
//        bool stop_requested()
template <typename Clock, typename Host>
class StopRules {
 public:
  // The loop consults check() once every 2^kPollIntervalLog2 polls: ~20-40 us under QEMU, ~1 ms on a
  // parallel port; how late a stop request or the deadline is noticed, never how late an event is.
  static constexpr uint32_t kPollIntervalLog2 = 10;

  // limit_ticks == 0: no deadline.
  StopRules(Clock& clock, Host& host, uint64_t limit_ticks)
      : m_clock(clock), m_host(host), m_limit_ticks(limit_ticks) {}

  void begin(uint64_t start_tsc) {
    m_deadline = m_limit_ticks != 0 ? start_tsc + m_limit_ticks : UINT64_MAX;
    m_host.capture_started(start_tsc);
  }

  format::StopReason check() {
    if (m_host.stop_requested()) return format::StopReason::HostRequest;
    if (m_clock.now() >= m_deadline) return format::StopReason::Deadline;
    return format::StopReason::None;
  }

 private:
  Clock& m_clock;
  Host& m_host;
  uint64_t m_limit_ticks;
  uint64_t m_deadline = UINT64_MAX;
};

}  // namespace ett::capture
