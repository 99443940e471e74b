// event_stop.h: the stop rules decided by a recorded event: stop=zero (the ETT rule) and stop=code:P:C.
//
// Checked only on the change path, once per recorded event, never on the idle step: one compare of the
// event's code with a per-probe table (kNever where no rule applies).
#pragma once

#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::capture {

class EventStop {
 public:
  static constexpr uint16_t kNever = 0x100;  // no 8-bit code equals it

  static constexpr EventStop none() { return EventStop{}; }
  // stop=zero: a zero code on any probe ends the capture.
  static constexpr EventStop zero_code() {
    EventStop stop;
    for (uint16_t& code : stop.m_code) code = 0;
    stop.m_reason = format::StopReason::ZeroCode;
    return stop;
  }
  // stop=code:P:C, P from 1.
  static constexpr EventStop code_on_probe(uint8_t probe, uint8_t code) {
    EventStop stop;
    if (probe >= 1 && probe <= 8) stop.m_code[probe - 1] = code;
    stop.m_reason = format::StopReason::CodeMatch;
    return stop;
  }

  // k: 0-based probe index.
  [[gnu::always_inline]] bool hit(uint32_t k, uint8_t code) const { return m_code[k] == code; }
  constexpr format::StopReason reason() const { return m_reason; }
  constexpr bool active() const { return m_reason != format::StopReason::None; }

 private:
  constexpr EventStop() {
    for (uint16_t& code : m_code) code = kNever;
  }
  uint16_t m_code[8];
  format::StopReason m_reason = format::StopReason::None;
};

}  // namespace ett::capture
