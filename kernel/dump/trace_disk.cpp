// trace_disk.cpp: the search for a labelled disk, the session-chain walk, and the session writer.
#include "dump/trace_disk.h"

#include "arch/x86/cpu.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/tsc_math.h"

namespace ett::dump {

namespace {
// One chunk is assembled here (header + records + padding + CRC) and written with one command.
alignas(16) uint8_t g_chunk[format::kChunkBytes];
// The stall table, written once after the header.
alignas(16) StallTable g_stall_table;

Status write_header(drivers::AtaPio& ata, format::SessionHeader& header, format::SessionStatus status) {
  header.status = static_cast<uint32_t>(status);
  seal(header);
  return ata.write(header.start_lba, 1, &header);
}
}  // namespace

Result<TraceDisk> TraceDisk::find(uint64_t tsc_hz) {
  using drivers::AtaPio;
  const char* label_problem = nullptr;  // a labelled disk that this kernel cannot use says why
  for (uint32_t i = 0; i < AtaPio::kPositionCount; ++i) {
    const auto position = static_cast<AtaPio::Position>(i);
    const char* name = AtaPio::position_name(position);
    auto ata = AtaPio::open(position, tsc_hz);
    if (!ata) {
      console::print("ETT: ide %s: %s\n", name, ata.error().message);
      continue;
    }
    auto disk = open(*ata);
    if (!disk) {
      console::print("ETT: ide %s: disk \"%s\", %llu sectors: %s; not touched\n", name, ata->model(),
                     ata->sector_count(), disk.error().message);
      if (label_problem == nullptr && disk.error().message != kNotATraceDisk)
        label_problem = disk.error().message;
      continue;
    }
    console::print("ETT: ide %s: disk \"%s\", %llu sectors%s: ETT trace disk\n", name, ata->model(),
                   ata->sector_count(), ata->has_lba48() ? ", LBA48" : "");
    disk->m_position = position;
    disk->m_ata.enable_multiple_mode();
    return disk;
  }
  if (label_problem) return fail(label_problem);
  return fail(
      "no ETT trace disk on either IDE channel; a disk that is not an ETT trace disk is never written "
      "(make one with `ett mkdisk`)");
}

Status TraceDisk::check_room(uint64_t event_count) const {
  if (format::session_sectors(event_count) <= m_end_lba - m_append.lba) return {};
  static char message[192];
  lib::format(message, sizeof(message),
              "the trace disk is full: room for %llu events, the capture has %llu; nothing was written",
              max_events(), event_count);
  return fail(message);
}

Result<TraceDisk> TraceDisk::open(const drivers::AtaPio& ata_in) {
  drivers::AtaPio ata = ata_in;
  format::DiskLabel label;
  ETT_TRY(ata.read(0, 1, &label));
  ETT_TRY(check_label(label));
  const uint64_t end = label.total_sectors < ata.sector_count() ? label.total_sectors : ata.sector_count();
  ETT_TRY_ASSIGN(
      const AppendPoint append,
      find_append_point(label, ata.sector_count(), [&ata](uint64_t lba, format::SessionHeader& header) {
        return ata.read(lba, 1, &header);
      }));
  return TraceDisk(ata, label, append, end);
}

Result<DumpStats> TraceDisk::write_session(format::SessionHeader& header, const format::EventRecord* events,
                                           uint64_t event_count, const format::StallRecord* stalls,
                                           uint32_t stall_count, uint64_t tsc_hz) {
  ETT_TRY(check_room(event_count));
  start_session_header(header, m_label, m_append, event_count);
  const uint64_t chunk_count = header.chunk_count;
  console::print("ETT: dump session %u at LBA %llu: %llu events in %llu chunks\n", header.session_number,
                 header.start_lba, event_count, chunk_count);

  const uint64_t start = x86::rdtsc();
  build_stall_table(g_stall_table, header, stalls, stall_count);
  ETT_TRY(write_header(m_ata, header, format::SessionStatus::Writing));
  ETT_TRY(m_ata.write(header.start_lba + 1, format::kStallTableSectors, &g_stall_table));
  uint64_t next_report = chunk_count / 10;
  for (uint64_t index = 0; index < chunk_count; ++index) {
    build_chunk(g_chunk, header.session_number, index, events, event_count);
    ETT_TRY(m_ata.write(chunk_lba(header, index), format::kChunkSectors, g_chunk));
    if (chunk_count >= 20 && index + 1 == next_report && index + 1 < chunk_count) {
      console::print("ETT: dump %llu%% (%llu/%llu chunks)\n", (index + 1) * 100 / chunk_count, index + 1,
                     chunk_count);
      next_report += chunk_count / 10;
    }
  }
  ETT_TRY(m_ata.flush_cache());
  ETT_TRY(write_header(m_ata, header, format::SessionStatus::Complete));
  ETT_TRY(m_ata.flush_cache());
  const uint64_t ticks = x86::rdtsc() - start;

  m_append = {header.start_lba + header.reserved_sectors, header.session_number + 1,
              m_append.existing_sessions + 1};
  const DumpStats stats{chunk_count, header.reserved_sectors * format::kSectorSize, ticks};
  const uint64_t us = lib::us_for_ticks(ticks, tsc_hz);
  const uint64_t centi_mb_per_s = us == 0 ? 0 : stats.bytes * 100 / us;  // bytes per us = MB/s
  console::print("ETT: dump complete: %llu KiB in %llu ms (%llu.%02llu MB/s)\n", stats.bytes / 1024,
                 us / 1000, centi_mb_per_s / 100, centi_mb_per_s % 100);
  return stats;
}

}  // namespace ett::dump
