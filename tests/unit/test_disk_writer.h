// test_disk_writer.h: test-side trace writer: lays sessions onto an image as trace_format.h describes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "ett/crc32c.h"
#include "ett/trace_format.h"

namespace ett::test {

namespace f = ett::format;

struct SessionSpec {
  std::vector<f::EventRecord> records;
  f::SessionStatus status = f::SessionStatus::Complete;
  uint64_t tsc_hz = 3'000'000'000;
  uint64_t capture_start_tsc = 1'000'000;
  uint8_t initial_lines = 0;
  bool write_chunks = true;                // false: header only (a dump cut off before any chunk)
  std::vector<bool> skip_chunk;            // per chunk: true = leave it unwritten
  const uint8_t* uuid_override = nullptr;  // a header "from another disk"
};

// Records with distinct, checkable contents: probe alternates 1/2, code counts, tsc increases.
inline std::vector<f::EventRecord> make_records(size_t count, uint64_t first_tsc = 1'000'100) {
  std::vector<f::EventRecord> records(count);
  for (size_t i = 0; i < count; ++i) {
    records[i].tsc = first_tsc + i * 600 + (i % 7);
    records[i].probe = static_cast<uint8_t>(1 + i % 2);
    records[i].code = static_cast<uint8_t>(1 + (i / 2) % 15);
    records[i].lines = static_cast<uint8_t>(i * 37);
    records[i].flags = 0;
    records[i].aux = static_cast<uint32_t>(i * 3);
  }
  return records;
}

class TestDiskWriter {
 public:
  explicit TestDiskWriter(const std::string& path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_RDWR);
    if (m_fd < 0) throw std::runtime_error("cannot open " + path);
    read_at(&m_label, sizeof(m_label), 0);
    m_next_lba = m_label.first_session_lba;
  }
  ~TestDiskWriter() { ::close(m_fd); }
  TestDiskWriter(const TestDiskWriter&) = delete;
  TestDiskWriter& operator=(const TestDiskWriter&) = delete;

  // Appends a session; returns its header's LBA.
  uint64_t append(const SessionSpec& spec) {
    const uint64_t lba = m_next_lba;
    const uint64_t events = spec.records.size();
    f::SessionHeader header;
    std::memset(&header, 0, sizeof(header));
    std::memcpy(header.magic, f::kSessionMagic, sizeof(header.magic));
    header.format_version = f::kFormatVersion;
    header.status = static_cast<uint32_t>(spec.status);
    header.session_number = ++m_sessions;
    header.record_size = sizeof(f::EventRecord);
    header.chunk_sectors = f::kChunkSectors;
    header.start_lba = lba;
    header.reserved_sectors = f::session_sectors(events);
    header.event_count = events;
    header.chunk_count = f::chunks_for(events);
    header.tsc_hz = spec.tsc_hz;
    header.tsc_method = static_cast<uint32_t>(f::TscMethod::Pit);
    header.capture_start_tsc = spec.capture_start_tsc;
    header.capture_end_tsc = events ? spec.records.back().tsc + 10 : spec.capture_start_tsc;
    header.captured_at_unix = 1'700'000'000 + m_sessions;
    header.stop_reason = static_cast<uint32_t>(f::StopReason::HostRequest);
    header.probe_source = static_cast<uint32_t>(f::ProbeSource::Ivshmem);
    header.layout = static_cast<uint32_t>(f::Layout::Double2x4);
    header.mode = static_cast<uint32_t>(f::CaptureMode::Capture);
    header.initial_lines = spec.initial_lines;
    header.filter_mask = 0xFF;
    std::memcpy(header.disk_uuid, spec.uuid_override ? spec.uuid_override : m_label.disk_uuid, 16);
    std::strcpy(header.cmdline, "exit=qemu");
    header.crc = ett::crc32c(&header, f::kSectorSize - 4);
    write_at(&header, sizeof(header), lba * f::kSectorSize);

    if (spec.write_chunks) {
      for (uint64_t c = 0; c < header.chunk_count; ++c) {
        if (c < spec.skip_chunk.size() && spec.skip_chunk[c]) continue;
        std::vector<uint8_t> chunk(f::kChunkBytes, 0);
        f::ChunkHeader chunk_header;
        std::memset(&chunk_header, 0, sizeof(chunk_header));
        std::memcpy(chunk_header.magic, f::kChunkMagic, sizeof(chunk_header.magic));
        chunk_header.session_number = header.session_number;
        chunk_header.chunk_index = c;
        chunk_header.first_seq = c * f::kRecordsPerChunk;
        const uint64_t count = std::min<uint64_t>(f::kRecordsPerChunk, events - chunk_header.first_seq);
        chunk_header.record_count = static_cast<uint32_t>(count);
        std::memcpy(chunk.data(), &chunk_header, sizeof(chunk_header));
        std::memcpy(chunk.data() + sizeof(chunk_header), spec.records.data() + chunk_header.first_seq,
                    count * sizeof(f::EventRecord));
        chunk_header.crc = ett::crc32c(chunk.data(), chunk.size());  // crc field is still zero here
        std::memcpy(chunk.data(), &chunk_header, sizeof(chunk_header));
        write_at(chunk.data(), chunk.size(), chunk_lba(lba, c) * f::kSectorSize);
      }
    }
    m_next_lba = lba + header.reserved_sectors;
    return lba;
  }

  static uint64_t chunk_lba(uint64_t session_lba, uint64_t chunk) {
    return session_lba + 1 + chunk * f::kChunkSectors;
  }

  void write_at(const void* data, size_t size, uint64_t offset) {
    if (::pwrite(m_fd, data, size, static_cast<off_t>(offset)) != static_cast<ssize_t>(size))
      throw std::runtime_error("write failed");
  }
  void read_at(void* data, size_t size, uint64_t offset) {
    if (::pread(m_fd, data, size, static_cast<off_t>(offset)) != static_cast<ssize_t>(size))
      throw std::runtime_error("read failed");
  }
  void xor_byte(uint64_t offset, uint8_t mask) {
    uint8_t byte;
    read_at(&byte, 1, offset);
    byte ^= mask;
    write_at(&byte, 1, offset);
  }

  const f::DiskLabel& label() const { return m_label; }

 private:
  std::string m_path;
  int m_fd = -1;
  f::DiskLabel m_label{};
  uint64_t m_next_lba = 0;
  uint32_t m_sessions = 0;
};

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ett-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (m_path / name).string(); }

 private:
  std::filesystem::path m_path;
};

}  // namespace ett::test
