// session_verify.cpp: the dump's read-back: header, stall table and chunks compared byte for byte.
#include "dump/session_verify.h"

#include "lib/format.h"

namespace ett::dump {

namespace {
// The first sector of `size` bytes where `a` and `b` differ (size / kSectorSize when none does).
uint32_t first_different_sector(const uint8_t* a, const uint8_t* b, uint32_t size) {
  for (uint32_t sector = 0; sector < size / format::kSectorSize; ++sector)
    if (!same_bytes(a + sector * format::kSectorSize, b + sector * format::kSectorSize, format::kSectorSize))
      return sector;
  return size / format::kSectorSize;
}

// Reads `sectors` at `lba` into `scratch` and compares them with `written`; `what` names the part.
Status read_back(drivers::storage::BlockDevice& device, uint64_t lba, uint32_t sectors, const void* written,
                 uint8_t* scratch, const char* what) {
  static char message[224];
  if (Status read = device.read(lba, sectors, scratch); !read) {
    lib::format(message, sizeof(message), "the dump could not be read back: %s (LBA %llu): %s", what,
                static_cast<unsigned long long>(lba), read.error().message);
    return fail(message);
  }
  const uint32_t bytes = sectors * format::kSectorSize;
  const uint32_t sector = first_different_sector(scratch, static_cast<const uint8_t*>(written), bytes);
  if (sector == sectors) return {};
  lib::format(message, sizeof(message),
              "the dump did not read back as written: %s, sector at LBA %llu differs", what,
              static_cast<unsigned long long>(lba + sector));
  return fail(message);
}
}  // namespace

Status verify_session_body(drivers::storage::BlockDevice& device, const format::SessionHeader& header,
                           const StallTable& stalls, const format::EventRecord* events, uint64_t event_count,
                           uint8_t* scratch, uint8_t* expected, Checksum checksum) {
  ETT_TRY(read_back(device, header.start_lba + 1, format::kStallTableSectors, &stalls, scratch,
                    "the stall table"));
  char what[48];
  for (uint64_t index = 0; index < header.chunk_count; ++index) {
    build_chunk(expected, header.session_number, index, events, event_count, checksum);
    lib::format(what, sizeof(what), "chunk %llu", static_cast<unsigned long long>(index));
    ETT_TRY(read_back(device, chunk_lba(header, index), format::kChunkSectors, expected, scratch, what));
  }
  return {};
}

Status verify_session_header(drivers::storage::BlockDevice& device, const format::SessionHeader& header,
                             const void* block, uint32_t block_sectors, uint8_t* scratch) {
  return read_back(device, header.start_lba + 1 - block_sectors, block_sectors, block, scratch,
                   "the session header");
}

}  // namespace ett::dump
