// test_disk_writer.h: test-side trace writer: sessions through host::SessionWriter, plus byte-level damage.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ett/crc32c.h"
#include "ett/trace_format.h"
#include "image/disk_maker.h"
#include "image/session_writer.h"

namespace ett::test {

namespace f = ett::format;

// A new, empty trace disk image of `size_bytes` at `path`, as `ett mkdisk` makes it; throws when it cannot.
inline void make_blank_disk(const std::string& path, uint64_t size_bytes = 8ull << 20,
                            const std::string& name = "") {
  host::MakeDiskOptions options;
  options.path = path;
  options.size_bytes = size_bytes;
  options.size_given = true;
  options.name = name;
  if (auto made = host::make_disk(options); !made) throw std::runtime_error(made.error().message);
}

struct SessionSpec {
  std::vector<f::EventRecord> records;
  f::SessionStatus status = f::SessionStatus::Complete;
  uint64_t tsc_hz = 3'000'000'000;
  uint64_t capture_start_tsc = 1'000'000;
  uint8_t initial_lines = 0;
  bool write_chunks = true;                // false: header only (a dump cut off before any chunk)
  std::vector<bool> skip_chunk;            // per chunk: true = leave it unwritten
  const uint8_t* uuid_override = nullptr;  // a header "from another disk"
  std::vector<f::StallRecord> stalls;      // the stall table (format 2)
  uint64_t typical_check_ticks = 0;
  uint64_t longest_check_ticks = 0;
  uint64_t stall_threshold_ticks = 0;
  uint32_t format_version = f::kSessionFormatVersion;  // 1: as written before the stall table
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
  }
  ~TestDiskWriter() { ::close(m_fd); }
  TestDiskWriter(const TestDiskWriter&) = delete;
  TestDiskWriter& operator=(const TestDiskWriter&) = delete;

  // Appends a session through the host library's SessionWriter (the one `ett synth` uses); returns its
  // header's LBA. The writer finds the end of the session chain when the first session is appended.
  uint64_t append(const SessionSpec& spec) {
    if (!m_writer) {
      auto opened = host::SessionWriter::open(m_path);
      if (!opened) throw std::runtime_error(opened.error().message);
      m_writer.emplace(std::move(*opened));
    }
    host::SessionSpec host_spec;
    host_spec.records = spec.records;
    host_spec.status = spec.status;
    host_spec.tsc_hz = spec.tsc_hz;
    host_spec.capture_start_tsc = spec.capture_start_tsc;
    host_spec.captured_at_unix = 1'700'000'000 + m_writer->last_session() + 1;
    host_spec.initial_lines = spec.initial_lines;
    host_spec.write_chunks = spec.write_chunks;
    host_spec.skip_chunk = spec.skip_chunk;
    host_spec.uuid_override = spec.uuid_override;
    host_spec.stalls = spec.stalls;
    host_spec.typical_check_ticks = spec.typical_check_ticks;
    host_spec.longest_check_ticks = spec.longest_check_ticks;
    host_spec.stall_threshold_ticks = spec.stall_threshold_ticks;
    host_spec.format_version = spec.format_version;
    auto lba = m_writer->append(host_spec);
    if (!lba) throw std::runtime_error(lba.error().message);
    return *lba;
  }

  static uint64_t chunk_lba(uint64_t session_lba, uint64_t chunk) {
    return host::SessionWriter::chunk_lba(session_lba, chunk);
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
  std::optional<host::SessionWriter> m_writer;
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
