// pretrigger_ring.h: the last N events before the trigger, kept in a ring at the front of the capture buffer.
//
// Only the trigger wait (capture_loop.h) writes it; when the trigger fires, linearize() puts the ring in
// time order in place (three reversals, no extra memory) and the capture continues right after it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::capture {

class PretriggerRing {
 public:
  PretriggerRing(format::EventRecord* base, size_t capacity) : m_base(base), m_capacity(capacity) {}

  [[gnu::always_inline]] void push(uint64_t tsc, uint8_t probe, uint8_t code, uint8_t lines) {
    m_base[m_next] = format::EventRecord{tsc, probe, code, lines, 0, 0};
    if (++m_next == m_capacity) m_next = 0;
    if (m_count < m_capacity) ++m_count;
  }

  // Oldest first at m_base[0]; returns how many records the ring holds.
  size_t linearize() {
    if (m_count == m_capacity && m_next != 0) {
      reverse(0, m_next);
      reverse(m_next, m_capacity);
      reverse(0, m_capacity);
    }
    m_next = m_count == m_capacity ? 0 : m_count;
    return m_count;
  }

  size_t capacity() const { return m_capacity; }
  size_t size() const { return m_count; }

 private:
  void reverse(size_t begin, size_t end) {
    while (begin + 1 < end) {
      const format::EventRecord tmp = m_base[begin];
      m_base[begin] = m_base[end - 1];
      m_base[end - 1] = tmp;
      ++begin;
      --end;
    }
  }

  format::EventRecord* m_base;
  size_t m_capacity;
  size_t m_next = 0;
  size_t m_count = 0;
};

}  // namespace ett::capture
