// stall_log.h: the capture's own error: the loop's check-to-check intervals, and the stalls among them.
//
// The capture loop runs its stop check once every 2^10 polls, and the check reads the TSC anyway. Without a
// stall, one check-to-check interval is 1024 polls plus the events recorded in it; an SMI on a PC, or the
// host descheduling QEMU's vCPU, makes the interval longer by the time the loop did not run. An event that
// happened during that time is stamped when the loop runs again, late by up to the stall, so the loop-step
// bound pi does not hold for it. The log keeps:
//   - the longest interval of the capture (the capture's own worst check interval);
//   - the typical interval: the shortest one seen (seeded with 1024 bare polls timed just before the
//     capture, so that a stall in the first interval is caught too);
//   - every interval longer than max(kStallFactor x typical, floor) as a stall: the interval's start (the
//     previous check's TSC) and its length. The stall lies somewhere inside that window, so the record
//     covers it conservatively. The floor (kStallFloorNs at the capture's TSC rate) keeps the normal jitter
//     of a very short interval from counting. An interval crowded with events (more than about one change
//     per four polls) can pass the threshold without a stall: it is then recorded too, which withdraws the
//     bound from its events but never claims one that does not hold.
// The table holds kCapacity records. When it is full, the two neighbouring records with the shortest gap
// between them are merged into one that spans both (and the time between them), which makes room: every
// stall stays covered by some record, at the price of covering some time that had none. `count()` is every
// stall seen; `size()` the records kept.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::capture {

// One stall: the check interval that held it (as it goes into the session's stall table).
using Stall = format::StallRecord;

class StallLog {
 public:
  static constexpr uint32_t kCapacity = format::kMaxStallRecords;
  static constexpr uint64_t kStallFactor = 4;
  static constexpr uint32_t kStallFloorNs = 20'000;

  // A check at `tsc` starts the capture's intervals. seed_ticks: a typical interval measured just before
  // (0: none; the first interval then seeds it and cannot itself be a stall). floor_ticks: see above.
  void begin(uint64_t tsc, uint64_t seed_ticks, uint64_t floor_ticks) {
    m_last = tsc;
    m_typical = seed_ticks != 0 ? seed_ticks : UINT64_MAX;
    m_floor = floor_ticks;
    m_longest = 0;
    m_longest_stall = 0;
    m_count = 0;
    m_size = 0;
    m_intervals = 0;
  }

  // A stop check at `now`: closes the interval since the previous one.
  void note(uint64_t now) {
    const uint64_t interval = now - m_last;
    const uint64_t start = m_last;
    m_last = now;
    ++m_intervals;
    if (interval > m_longest) m_longest = interval;
    if (interval < m_typical) {
      m_typical = interval;
      return;
    }
    if (interval > threshold()) record(start, interval);
  }

  // The time from the last check to the end of the loop (fewer than 1024 polls): a stall in it counts too.
  void finish(uint64_t end_tsc) {
    const uint64_t interval = end_tsc - m_last;
    m_last = end_tsc;
    if (m_typical != UINT64_MAX && interval > threshold()) {
      if (interval > m_longest) m_longest = interval;
      record(end_tsc - interval, interval);
    }
  }

  uint64_t threshold() const {
    if (m_typical == UINT64_MAX) return UINT64_MAX;
    const uint64_t scaled = m_typical * kStallFactor;
    return scaled > m_floor ? scaled : m_floor;
  }
  uint64_t longest_interval() const { return m_longest; }
  uint64_t typical_interval() const { return m_typical == UINT64_MAX ? 0 : m_typical; }
  uint64_t intervals() const { return m_intervals; }
  uint64_t longest_stall() const { return m_longest_stall; }
  uint32_t count() const { return m_count; }
  uint32_t size() const { return m_size; }
  const Stall* records() const { return m_records; }

 private:
  // Out of line: it runs only after a stall, and keeps the capture loops that inline note() small (the one
  // call hot_loop_check.sh allows besides the trigger wait).
  [[gnu::noinline]] void record(uint64_t start, uint64_t length) {
    if (m_count != UINT32_MAX) ++m_count;
    if (length > m_longest_stall) m_longest_stall = length;
    if (m_size == kCapacity) merge_closest();
    m_records[m_size++] = Stall{start, length};
  }

  // Merges the two neighbours with the shortest gap between them into one record spanning both.
  void merge_closest() {
    uint32_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    for (uint32_t i = 0; i + 1 < m_size; ++i) {
      const uint64_t end = m_records[i].start_tsc + m_records[i].length_ticks;
      const uint64_t gap = m_records[i + 1].start_tsc - end;
      if (gap < best_gap) {
        best_gap = gap;
        best = i;
      }
    }
    Stall& merged = m_records[best];
    const Stall& next = m_records[best + 1];
    merged.length_ticks = next.start_tsc + next.length_ticks - merged.start_tsc;
    for (uint32_t i = best + 1; i + 1 < m_size; ++i) m_records[i] = m_records[i + 1];
    --m_size;
  }

  uint64_t m_last = 0;
  uint64_t m_typical = UINT64_MAX;
  uint64_t m_floor = 0;
  uint64_t m_longest = 0;
  uint64_t m_longest_stall = 0;
  uint64_t m_intervals = 0;
  uint32_t m_count = 0;
  uint32_t m_size = 0;
  Stall m_records[kCapacity];
};

}  // namespace ett::capture
