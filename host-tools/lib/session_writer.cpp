// session_writer.cpp: lays a session (header, chunks, header again) onto a trace disk as trace_format.h says.
#include "session_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fast_crc32c.h"
#include "trace_image.h"

namespace ett::host {

namespace f = ett::format;

Expected<SessionWriter> SessionWriter::open(const std::string& path) {
  auto image = TraceImage::open(path);
  if (!image) return image.failure();
  SessionWriter writer;
  writer.m_path = path;
  writer.m_label = image->label();
  writer.m_next_lba = writer.m_label.first_session_lba;
  if (!image->sessions().empty()) {
    const f::SessionHeader& last = image->sessions().back();
    writer.m_next_lba = last.start_lba + last.reserved_sectors;
    writer.m_sessions = last.session_number;
  }
  writer.m_fd.reset(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!writer.m_fd.valid()) return make_error(ErrorKind::Io, errno_message(path, errno));
  return Expected<SessionWriter>(std::move(writer));
}

Status SessionWriter::write_at(const void* data, size_t size, uint64_t offset) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t wrote = ::pwrite(m_fd.get(), bytes + done, size - done, static_cast<off_t>(offset + done));
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorKind::Io, errno_message(m_path + ": write failed", errno));
    }
    done += static_cast<size_t>(wrote);
  }
  return {};
}

Expected<uint64_t> SessionWriter::append(const SessionSpec& spec) {
  const uint64_t lba = m_next_lba;
  const uint64_t events = spec.records.size();
  const uint64_t sectors = f::session_sectors(events);
  if (lba + sectors > m_label.total_sectors)
    return make_error(ErrorKind::Usage,
                      fmt::format("{}: a session of {} events needs {} MiB from LBA {}, but the disk ends at "
                                  "LBA {} (make a bigger disk with ett mkdisk --size)",
                                  m_path, events, (sectors * f::kSectorSize + (1 << 20) - 1) >> 20, lba,
                                  m_label.total_sectors));
  f::SessionHeader header;
  std::memset(&header, 0, sizeof(header));
  std::memcpy(header.magic, f::kSessionMagic, sizeof(header.magic));
  header.format_version = f::kFormatVersion;
  header.status = static_cast<uint32_t>(spec.status);
  header.session_number = m_sessions + 1;
  header.record_size = sizeof(f::EventRecord);
  header.chunk_sectors = f::kChunkSectors;
  header.flags = f::kFlagInvariantTsc;
  header.start_lba = lba;
  header.reserved_sectors = sectors;
  header.event_count = events;
  header.chunk_count = f::chunks_for(events);
  header.tsc_hz = spec.tsc_hz;
  header.tsc_method = static_cast<uint32_t>(f::TscMethod::Pit);
  header.tsc_uncertainty_ppm = 20;
  header.capture_start_tsc = spec.capture_start_tsc;
  header.capture_end_tsc = events ? spec.records.back().tsc + 10 : spec.capture_start_tsc;
  header.buffer_capacity = std::max<uint64_t>(events, 1'000'000);
  header.captured_at_unix = spec.captured_at_unix;
  header.stop_reason = static_cast<uint32_t>(spec.stop_reason);
  header.probe_source = static_cast<uint32_t>(f::ProbeSource::Ivshmem);
  header.layout = static_cast<uint32_t>(spec.layout);
  header.mode = static_cast<uint32_t>(spec.mode);
  header.initial_lines = spec.initial_lines;
  header.final_lines = events ? spec.records.back().lines : spec.initial_lines;
  header.filter_mask = 0xFF;
  std::memcpy(header.disk_uuid, spec.uuid_override ? spec.uuid_override : m_label.disk_uuid, 16);
  std::memcpy(header.cpu_vendor, spec.cpu_vendor.data(), std::min(spec.cpu_vendor.size(), sizeof(header.cpu_vendor) - 1));
  std::memcpy(header.cpu_brand, spec.cpu_brand.data(), std::min(spec.cpu_brand.size(), sizeof(header.cpu_brand) - 1));
  std::memcpy(header.cmdline, spec.cmdline.data(), std::min(spec.cmdline.size(), sizeof(header.cmdline) - 1));
  header.crc = fast_crc32c(&header, f::kSectorSize - 4);
  ETT_TRY(write_at(&header, sizeof(header), lba * f::kSectorSize));

  if (spec.write_chunks) {
    // Runs of consecutive chunks go out in one write (the benchmark writes 10 million events).
    constexpr uint64_t kBatch = 32;
    std::vector<uint8_t> batch(kBatch * f::kChunkBytes);
    uint64_t batch_first = 0, batch_count = 0;
    auto flush = [&]() -> Status {
      if (batch_count == 0) return {};
      auto wrote = write_at(batch.data(), batch_count * f::kChunkBytes, chunk_lba(lba, batch_first) * f::kSectorSize);
      batch_count = 0;
      return wrote;
    };
    for (uint64_t c = 0; c < header.chunk_count; ++c) {
      if (c < spec.skip_chunk.size() && spec.skip_chunk[c]) {
        ETT_TRY(flush());
        continue;
      }
      if (batch_count == 0) batch_first = c;
      uint8_t* chunk = batch.data() + batch_count * f::kChunkBytes;
      std::memset(chunk, 0, f::kChunkBytes);
      f::ChunkHeader chunk_header;
      std::memset(&chunk_header, 0, sizeof(chunk_header));
      std::memcpy(chunk_header.magic, f::kChunkMagic, sizeof(chunk_header.magic));
      chunk_header.session_number = header.session_number;
      chunk_header.chunk_index = c;
      chunk_header.first_seq = c * f::kRecordsPerChunk;
      const uint64_t count = std::min<uint64_t>(f::kRecordsPerChunk, events - chunk_header.first_seq);
      chunk_header.record_count = static_cast<uint32_t>(count);
      std::memcpy(chunk, &chunk_header, sizeof(chunk_header));
      std::memcpy(chunk + sizeof(chunk_header), spec.records.data() + chunk_header.first_seq,
                  count * sizeof(f::EventRecord));
      chunk_header.crc = fast_crc32c(chunk, f::kChunkBytes);  // crc field is still zero here
      std::memcpy(chunk, &chunk_header, sizeof(chunk_header));
      if (++batch_count == kBatch) ETT_TRY(flush());
    }
    ETT_TRY(flush());
  }
  m_next_lba = lba + sectors;
  ++m_sessions;
  return lba;
}

}  // namespace ett::host
