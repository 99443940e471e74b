// session_writer.h: appends sessions to a trace disk as the kernel's dump does (tests, `ett synth`,
// benchmarks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ett/trace_format.h"

namespace ett::host {

// What to write. The defaults describe a plain completed capture on the ETT double probe.
struct SessionSpec {
  std::span<const format::EventRecord> records;
  format::SessionStatus status = format::SessionStatus::Complete;
  uint64_t tsc_hz = 3'000'000'000;
  uint64_t capture_start_tsc = 1'000'000;
  uint64_t captured_at_unix = 0;
  uint8_t initial_lines = 0;
  format::Layout layout = format::Layout::Double2x4;
  format::ProbeSource probe_source = format::ProbeSource::Ivshmem;
  format::CaptureMode mode = format::CaptureMode::Capture;
  format::StopReason stop_reason = format::StopReason::HostRequest;
  std::string cmdline = "exit=qemu";
  std::string cpu_vendor;
  std::string cpu_brand;
  // The capture's own error (session format 2): its stall records and check intervals in ticks.
  std::vector<format::StallRecord> stalls;
  uint32_t stall_count = 0;  // 0: stalls.size()
  uint64_t typical_check_ticks = 0;
  uint64_t longest_check_ticks = 0;
  uint64_t stall_threshold_ticks = 0;
  // 1 writes a session as kernels before the stall table did (tests of reading old images).
  uint32_t format_version = format::kSessionFormatVersion;
  // Damage, for tests of recovery: header only, chunks left unwritten, a header "from another disk".
  bool write_chunks = true;
  std::vector<bool> skip_chunk;
  const uint8_t* uuid_override = nullptr;
  // A survey session (mode=survey, no records): this block is written after the stall table, its CRC computed
  // here. flags and smi_count go into the header as the kernel sets them.
  const format::SurveyBlock* survey = nullptr;
  uint32_t flags = format::kFlagInvariantTsc;
  uint32_t smi_count = 0;
};

class SessionWriter {
 public:
  // Opens a trace disk for writing after its last session (the chain as TraceImage walks it).
  static Expected<SessionWriter> open(const std::string& path);

  // Appends a session; returns its header's LBA. Fails when the session does not fit on the disk.
  Expected<uint64_t> append(const SessionSpec& spec);

  const format::DiskLabel& label() const { return m_label; }
  uint32_t last_session() const { return m_sessions; }
  // Where chunk `chunk` of a session at `session_lba` starts (after the header and, from format 2 on, the
  // stall table).
  static uint64_t chunk_lba(uint64_t session_lba, uint64_t chunk,
                            uint32_t format_version = format::kSessionFormatVersion) {
    return session_lba + format::sectors_before_chunks(format_version) + chunk * format::kChunkSectors;
  }

 private:
  SessionWriter() = default;
  Status write_at(const void* data, size_t size, uint64_t offset);

  std::string m_path;
  UniqueFd m_fd;
  format::DiskLabel m_label{};
  uint64_t m_next_lba = 0;
  uint32_t m_sessions = 0;
};

}  // namespace ett::host
