// trace_disk.h: the labelled trace disk, found on either IDE channel: checked before the capture, appended
// after it.
#pragma once

#include <stdint.h>

#include "drivers/ata_pio.h"
#include "ett/session_codec.h"
#include "ett/result.h"
#include "ett/trace_format.h"

namespace ett::dump {

struct DumpStats {
  uint64_t chunks;
  uint64_t bytes;  // header + chunks
  uint64_t ticks;  // TSC ticks from the first write to the last flush
};

class TraceDisk {
 public:
  // Searches the four IDE positions (primary master, primary slave, secondary master, secondary slave) for
  // the first disk with a valid ETT label, saying on the console what it finds at each. Only IDENTIFY and
  // reads reach a disk before its label is checked: a disk without a valid label is never written to.
  static Result<TraceDisk> find(uint64_t tsc_hz);
  // Reads and checks the label at LBA 0 of one disk and finds where the next session goes. Reads only.
  static Result<TraceDisk> open(const drivers::AtaPio& ata);

  drivers::AtaPio::Position position() const { return m_position; }
  const drivers::AtaPio& ata() const { return m_ata; }
  const format::DiskLabel& label() const { return m_label; }
  const AppendPoint& append_point() const { return m_append; }
  // The end of the usable disk: the label's size or the drive's, whichever is smaller.
  uint64_t end_lba() const { return m_end_lba; }
  uint64_t max_events() const { return events_that_fit(m_append.lba, m_end_lba); }
  // Whether a session of `event_count` events fits in the free space; the refusal names both numbers.
  Status check_room(uint64_t event_count) const;

  // Writes `header` (completed by start_session_header here) and the events as one session: header with
  // status Writing, chunks, FLUSH CACHE, header with status Complete, FLUSH CACHE. Progress goes to the
  // console.
  Result<DumpStats> write_session(format::SessionHeader& header, const format::EventRecord* events,
                                  uint64_t event_count, uint64_t tsc_hz);

 private:
  TraceDisk(const drivers::AtaPio& ata, const format::DiskLabel& label, AppendPoint append, uint64_t end_lba)
      : m_ata(ata), m_label(label), m_append(append), m_end_lba(end_lba) {}

  drivers::AtaPio m_ata;
  drivers::AtaPio::Position m_position = drivers::AtaPio::Position::PrimaryMaster;
  format::DiskLabel m_label;
  AppendPoint m_append;
  uint64_t m_end_lba;
};

}  // namespace ett::dump
