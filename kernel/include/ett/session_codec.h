// session_codec.h: the pure half of the dump: checks a disk label, walks the session chain, and builds the
// exact bytes of session headers and chunks. No hardware: the kernel's dump and the host's session writer
// (`ett synth`, tests, benchmarks) both build sessions with it, and the host tests run it against a disk in
// memory.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ett/crc32c.h"
#include "ett/result.h"
#include "ett/trace_format.h"

namespace ett::dump {

inline constexpr const char* kNotATraceDisk = "the disk is not an ETT trace disk (run `ett mkdisk`)";

// The CRC32C both DiskLabel and SessionHeader carry in their last four bytes.
template <typename Sector>
uint32_t sector_crc(const Sector& sector) {
  static_assert(sizeof(Sector) == format::kSectorSize && offsetof(Sector, crc) == format::kSectorSize - 4);
  return crc32c(&sector, offsetof(Sector, crc));
}

template <typename Sector>
void seal(Sector& sector) {
  sector.crc = sector_crc(sector);
}

inline bool same_bytes(const void* a, const void* b, size_t size) {
  return __builtin_memcmp(a, b, size) == 0;
}

inline Status check_label(const format::DiskLabel& label) {
  if (!same_bytes(label.magic, format::kDiskMagic, sizeof(label.magic)) || label.crc != sector_crc(label))
    return fail(kNotATraceDisk);
  if (label.format_version != format::kFormatVersion)
    return fail("the trace disk has another format version than this kernel (relabel it with `ett mkdisk`)");
  if (label.sector_size != format::kSectorSize)
    return fail("the trace disk label does not say 512-byte sectors");
  if (label.first_session_lba == 0 || label.first_session_lba >= label.total_sectors)
    return fail("the trace disk label is inconsistent (first_session_lba outside the disk)");
  return {};
}

// A sector is a session of this disk when it has the session magic, a valid CRC and the label's UUID (a
// header left over from an earlier label of the same disk is not).
inline bool is_session_of(const format::SessionHeader& header, const format::DiskLabel& label) {
  return same_bytes(header.magic, format::kSessionMagic, sizeof(header.magic)) &&
         header.crc == sector_crc(header) &&
         same_bytes(header.disk_uuid, label.disk_uuid, sizeof(label.disk_uuid));
}

struct AppendPoint {
  uint64_t lba;             // where the next session's header goes
  uint32_t session_number;  // the number it gets
  uint32_t existing_sessions;
};

// Follows the chain from label.first_session_lba until a sector that is not a session header.
// ReadSector: Status(uint64_t lba, format::SessionHeader& out).
template <typename ReadSector>
Result<AppendPoint> find_append_point(const format::DiskLabel& label, uint64_t disk_sectors,
                                      ReadSector&& read) {
  AppendPoint point{label.first_session_lba, 1, 0};
  const uint64_t end = label.total_sectors < disk_sectors ? label.total_sectors : disk_sectors;
  while (point.lba < end) {
    format::SessionHeader header;
    ETT_TRY(read(point.lba, header));
    if (!is_session_of(header, label)) break;
    if (header.start_lba != point.lba || header.reserved_sectors == 0 ||
        header.reserved_sectors > end - point.lba)
      return fail("a session header on the trace disk is inconsistent (start_lba or reserved_sectors)");
    point.lba += header.reserved_sectors;
    point.session_number = header.session_number + 1;
    ++point.existing_sessions;
  }
  return point;
}

// Events that fit between `append_lba` and `end_lba` as one session.
constexpr uint64_t events_that_fit(uint64_t append_lba, uint64_t end_lba) {
  if (end_lba <= append_lba + 1) return 0;
  return (end_lba - append_lba - 1) / format::kChunkSectors * format::kRecordsPerChunk;
}

// The layout fields of a new session header (status Writing); the caller adds what it knows about the
// capture.
inline void start_session_header(format::SessionHeader& header, const format::DiskLabel& label,
                                 const AppendPoint& point, uint64_t event_count) {
  __builtin_memcpy(header.magic, format::kSessionMagic, sizeof(header.magic));
  header.format_version = format::kFormatVersion;
  header.status = static_cast<uint32_t>(format::SessionStatus::Writing);
  header.session_number = point.session_number;
  header.record_size = sizeof(format::EventRecord);
  header.chunk_sectors = format::kChunkSectors;
  header.start_lba = point.lba;
  header.reserved_sectors = format::session_sectors(event_count);
  header.event_count = event_count;
  header.chunk_count = format::chunks_for(event_count);
  __builtin_memcpy(header.disk_uuid, label.disk_uuid, sizeof(header.disk_uuid));
}

// A CRC32C over a buffer: the kernel's portable crc32c, or a faster one on the host (same result).
using Checksum = uint32_t (*)(const void* data, size_t size);

// Fills `chunk` (kChunkBytes) with chunk `index` of a session holding `events[0, event_count)`: the header,
// its records, zero padding, and the CRC over all of it. Returns the number of records in the chunk.
inline uint32_t build_chunk(uint8_t* chunk, uint32_t session_number, uint64_t index,
                            const format::EventRecord* events, uint64_t event_count,
                            Checksum checksum = crc32c) {
  const uint64_t first = index * format::kRecordsPerChunk;
  const uint64_t left = event_count > first ? event_count - first : 0;
  const auto count = static_cast<uint32_t>(left < format::kRecordsPerChunk ? left : format::kRecordsPerChunk);
  format::ChunkHeader header{};
  __builtin_memcpy(header.magic, format::kChunkMagic, sizeof(header.magic));
  header.session_number = session_number;
  header.chunk_index = index;
  header.first_seq = first;
  header.record_count = count;
  const size_t records_bytes = size_t{count} * sizeof(format::EventRecord);
  __builtin_memcpy(chunk, &header, sizeof(header));
  __builtin_memcpy(chunk + sizeof(header), events + first, records_bytes);
  __builtin_memset(chunk + sizeof(header) + records_bytes, 0,
                   format::kChunkBytes - sizeof(header) - records_bytes);
  const uint32_t crc = checksum(chunk, format::kChunkBytes);
  __builtin_memcpy(chunk + offsetof(format::ChunkHeader, crc), &crc, sizeof(crc));
  return count;
}

}  // namespace ett::dump
