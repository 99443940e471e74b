// trace_disk.h: the labelled trace disk, searched for on IDE, AHCI and NVMe: checked before the capture,
// appended after it.
#pragma once

#include <stdint.h>

#include "drivers/storage/block_device.h"
#include "ett/result.h"
#include "ett/session_codec.h"
#include "ett/trace_format.h"

namespace ett::dump {

struct DumpStats {
  uint64_t chunks;
  uint64_t bytes;  // header + chunks
  uint64_t ticks;  // TSC ticks from the first write to the last flush
};

class TraceDisk {
 public:
  // Searches, in this order, the four legacy IDE positions, the channels of PCI IDE controllers in native
  // mode, every AHCI port with a SATA disk and every NVMe namespace, for the first disk with a valid ETT
  // label, saying on the console what it finds at each and why it passes over it. Only IDENTIFY and reads
  // reach a disk before its label is checked: a disk without a valid label is never written to.
  static Result<TraceDisk> find(uint64_t tsc_hz);
  // Reads and checks the label at LBA 0 of one disk and finds where the next session goes. Reads only.
  // `device` must outlive the TraceDisk.
  static Result<TraceDisk> open(drivers::storage::BlockDevice& device, const char* where);
  // mode=survey: the same search over every disk, keeping none (nothing is written): each disk the search
  // opens goes into `out` (up to `max`), Usable when it has a valid ETT label, else Refused. Returns the
  // number listed. Run it before find(): every controller is left stopped, as a search that passed it over.
  static uint32_t census(uint64_t tsc_hz, format::SurveyDisk* out, uint32_t max);

  // Where the disk is, e.g. "ide primary master", "ahci 00:1f.2 port 1", "nvme 00:04.0 namespace 1".
  const char* where() const { return m_where; }
  drivers::storage::BlockDevice& device() const { return *m_device; }
  const format::DiskLabel& label() const { return m_label; }
  const AppendPoint& append_point() const { return m_append; }
  // The end of the usable disk: the label's size or the drive's, whichever is smaller (whole blocks).
  uint64_t end_lba() const { return m_end_lba; }
  uint64_t max_events() const;
  // Whether a session of `event_count` events fits in the free space; the refusal names both numbers.
  Status check_room(uint64_t event_count) const;

  // Writes `header` (completed by start_session_header here) and the events as one session: header with
  // status Writing, stall table, chunks, FLUSH CACHE, read-back of the stall table and every chunk, header
  // with status Complete, FLUSH CACHE, read-back of the header; then the drive is shut down (NVMe). Progress
  // goes to the console. A sector that does not read back as written fails the dump (the session stays
  // Writing on the disk; the caller keeps the events).
  // `stalls`: the capture's stall records, written as the stall table after the header.
  Result<DumpStats> write_session(format::SessionHeader& header, const format::EventRecord* events,
                                  uint64_t event_count, const format::StallRecord* stalls,
                                  uint32_t stall_count, uint64_t tsc_hz);
  // mode=survey: `header` (completed here, event_count 0), the zero stall table and `block` as one session of
  // format::survey_session_sectors(), read back before the header says Complete.
  Result<DumpStats> write_survey(format::SessionHeader& header, const format::SurveyBlock& block,
                                 uint64_t tsc_hz);

 private:
  TraceDisk(drivers::storage::BlockDevice& device, const format::DiskLabel& label, AppendPoint append,
            uint64_t end_lba)
      : m_device(&device), m_label(label), m_append(append), m_end_lba(end_lba) {}
  void set_where(const char* where);
  uint64_t padded_sectors(uint64_t sectors) const;
  static Status check_append_block(drivers::storage::BlockDevice& device, uint64_t append_lba,
                                   uint64_t end_lba);
  // The session's sectors written, flushed and read back (the time of the read-back in `verify_ticks`).
  Status write_and_verify(format::SessionHeader& header, const format::EventRecord* events,
                          uint64_t event_count, const format::StallRecord* stalls, uint32_t stall_count,
                          uint64_t& verify_ticks);
  Status write_chunks(const format::SessionHeader& header, const format::EventRecord* events,
                      uint64_t event_count);
  Status write_chunks_staged(const format::SessionHeader& header, const format::EventRecord* events,
                             uint64_t event_count);

  drivers::storage::BlockDevice* m_device;
  char m_where[48] = {};
  format::DiskLabel m_label;
  AppendPoint m_append;
  uint64_t m_end_lba;
};

}  // namespace ett::dump
