// serial_dump.cpp: the session writer for dump=serial: sectors as CRC-checked hex lines on COM1.
#include "dump/serial_dump.h"

#include "arch/x86/cmos_rtc.h"
#include "arch/x86/cpu.h"
#include "drivers/console.h"
#include "ett/serial_framing.h"
#include "lib/format.h"

namespace ett::dump {

namespace {
alignas(16) uint8_t g_serial_chunk[format::kChunkBytes];

}  // namespace

void SerialDump::start() {
  if (m_started) return;
  m_started = true;
  m_port.init();
  __builtin_memcpy(m_label.magic, format::kDiskMagic, sizeof(m_label.magic));
  m_label.format_version = format::kFormatVersion;
  m_label.sector_size = format::kSectorSize;
  // The UUID ties the sessions of one boot to its label: the TSC at the first dump is unique enough.
  const uint64_t tsc = x86::rdtsc();
  __builtin_memcpy(m_label.disk_uuid, &tsc, sizeof(tsc));
  __builtin_memcpy(m_label.disk_uuid + 8, "serial\0\0", 8);
  m_label.first_session_lba = format::kFirstSessionLba;
  m_label.total_sectors = format::kFirstSessionLba;
  m_label.created_unix = x86::CmosRtc::read_unix_time();
  __builtin_memcpy(m_label.name, "dump=serial", sizeof("dump=serial"));
}

void SerialDump::write_sectors(uint64_t lba, const void* data, uint32_t sectors) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  char line[serial::kMaxLineLength];
  for (uint32_t sector = 0; sector < sectors; ++sector) {
    for (uint32_t offset = 0; offset < format::kSectorSize; offset += serial::kBytesPerLine) {
      const size_t length =
          serial::encode_line(line, lba + sector, offset, bytes + sector * format::kSectorSize + offset);
      m_port.write(line, length);
    }
  }
}

void SerialDump::write_session(format::SessionHeader& header, const format::EventRecord* events,
                               uint64_t event_count) {
  start();
  start_session_header(header, m_label, m_append, event_count);
  const uint64_t chunk_count = header.chunk_count;
  console::print(
      "ETT: dump=serial: session %u (virtual LBA %llu): %llu events in %llu chunks as ETTX lines\n",
      header.session_number, header.start_lba, event_count, chunk_count);
  const uint64_t start_tsc = x86::rdtsc();

  // The label first (its size covering this session), so that a log cut off later still reads as a disk.
  m_label.total_sectors = header.start_lba + header.reserved_sectors;
  seal(m_label);
  write_sectors(0, &m_label, 1);
  header.status = static_cast<uint32_t>(format::SessionStatus::Writing);
  seal(header);
  write_sectors(header.start_lba, &header, 1);
  for (uint64_t index = 0; index < chunk_count; ++index) {
    build_chunk(g_serial_chunk, header.session_number, index, events, event_count);
    write_sectors(header.start_lba + 1 + index * format::kChunkSectors, g_serial_chunk,
                  format::kChunkSectors);
  }
  header.status = static_cast<uint32_t>(format::SessionStatus::Complete);
  seal(header);
  write_sectors(header.start_lba, &header, 1);

  m_append = {header.start_lba + header.reserved_sectors, header.session_number + 1,
              m_append.existing_sessions + 1};
  console::print("ETT: dump=serial complete: session %u, %llu chunks in %llu ticks\n", header.session_number,
                 chunk_count, x86::rdtsc() - start_tsc);
}

}  // namespace ett::dump
