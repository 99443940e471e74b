// serial_log.h: reads a serial log of dump=serial (kernel/dump/serial_dump.h has the line format) back into
// the sparse trace-disk image it describes, so that TraceImage decodes it like a disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ett::host {

struct SerialLogImage {
  std::vector<uint8_t> bytes;  // LBA 0 up to the last sector the log holds; sectors never sent are zero
  size_t good_lines = 0;
  size_t bad_lines = 0;  // ETTX lines with a wrong CRC or shape (dropped)
};

// Whether `text` holds a dump=serial line: an "ETTX " at the start of a line.
bool looks_like_serial_log(std::string_view text);

// Errors: NotTraceDisk when no line passes its check.
Expected<SerialLogImage> decode_serial_log(std::string_view text, const std::string& path);

}  // namespace ett::host
