// event_buffer.h: the capture buffer: a range of EventRecords in RAM, filled front to back.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::capture {

class EventBuffer {
 public:
  constexpr EventBuffer(format::EventRecord* begin, size_t capacity)
      : m_begin(begin), m_next(begin), m_end(begin + capacity) {}

  // The capture loop's only bounds check: one pointer comparison.
  [[gnu::always_inline]] bool full() const { return m_next == m_end; }

  [[gnu::always_inline]] void push(uint64_t tsc, uint8_t probe, uint8_t code, uint8_t lines) {
    *m_next++ = format::EventRecord{tsc, probe, code, lines, 0, 0};
  }
  // calibrate and hwlat records (see trace_format.h for what aux means per mode).
  [[gnu::always_inline]] void push(uint64_t tsc, uint8_t probe, uint8_t code, uint8_t lines, uint32_t aux) {
    *m_next++ = format::EventRecord{tsc, probe, code, lines, 0, aux};
  }
  // The pre-trigger ring fills the front of the buffer in place; the capture continues after it.
  format::EventRecord* next() const { return m_next; }
  void advance(size_t count) { m_next += count; }

  const format::EventRecord* begin() const { return m_begin; }
  size_t size() const { return static_cast<size_t>(m_next - m_begin); }
  size_t capacity() const { return static_cast<size_t>(m_end - m_begin); }

 private:
  format::EventRecord* m_begin;
  format::EventRecord* m_next;
  format::EventRecord* m_end;
};

}  // namespace ett::capture
