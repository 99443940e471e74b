// session_verify.h: reads a session back from the trace disk and compares every sector with what was
// written, so that a fault on the write path is seen while the events are still in RAM.
#pragma once

#include <stdint.h>

#include "drivers/storage/block_device.h"
#include "ett/result.h"
#include "ett/session_codec.h"
#include "ett/trace_format.h"

namespace ett::dump {

// Reads back the stall table and every chunk of the session `header` describes and compares them with
// `stalls` and with the chunks the writer built from `events` (rebuilt in `expected`). `scratch` and
// `expected` hold kChunkBytes each. The failure names the first part that differs or could not be read.
Status verify_session_body(drivers::storage::BlockDevice& device, const format::SessionHeader& header,
                           const StallTable& stalls, const format::EventRecord* events, uint64_t event_count,
                           uint8_t* scratch, uint8_t* expected, Checksum checksum = crc32c);

// Reads back the block that ends with the session header (header.start_lba is its last sector; one sector
// on a 512-byte disk) into `scratch` and compares it with `block`, `block_sectors` sectors as written.
Status verify_session_header(drivers::storage::BlockDevice& device, const format::SessionHeader& header,
                             const void* block, uint32_t block_sectors, uint8_t* scratch);

}  // namespace ett::dump
