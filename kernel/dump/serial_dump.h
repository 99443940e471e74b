// serial_dump.h: dump=serial, the fallback for a machine without a usable IDE disk: the sectors a trace disk
// would receive, streamed over COM1 as checked text lines that `ett ls`/`ett extract` read from a serial log.
//
// The stream is a sparse trace disk: a label at LBA 0 and each session at the LBAs it would have on a disk
// (the first at LBA 8, the next after the sectors the previous one reserves). Every 64 bytes of a sector go
// out as one ETTX line (ett/serial_framing.h), written whole between console lines. A session goes out as the
// disk writer does it, after the label (its size covering the session): its header with status Writing, the
// chunks, then the header again with status Complete; for a sector sent twice the later line counts. A log
// cut off part way therefore holds a session marked Writing whose complete chunks can be recovered.
#pragma once

#include <stdint.h>

#include "drivers/serial_port.h"
#include "ett/session_codec.h"
#include "ett/trace_format.h"

namespace ett::dump {

class SerialDump {
 public:
  // Writes `header` (completed here, like TraceDisk::write_session) and the events as the next session.
  void write_session(format::SessionHeader& header, const format::EventRecord* events, uint64_t event_count);

 private:
  void start();
  void write_sectors(uint64_t lba, const void* data, uint32_t sectors);

  drivers::SerialPort m_port{drivers::SerialPort::kCom1};
  bool m_started = false;
  format::DiskLabel m_label{};
  AppendPoint m_append{format::kFirstSessionLba, 1, 0};
};

}  // namespace ett::dump
