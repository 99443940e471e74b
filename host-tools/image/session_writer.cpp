// session_writer.cpp: appends a session to a trace-disk image with the kernel's session codec.
#include "image/session_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/fast_crc32c.h"
#include "common/write_all.h"
#include "ett/session_codec.h"
#include "image/trace_image.h"

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
  return pwrite_all(m_fd.get(), data, size, offset, m_path + ": write failed");
}

Expected<uint64_t> SessionWriter::append(const SessionSpec& spec) {
  const uint64_t lba = m_next_lba;
  const uint64_t events = spec.records.size();
  const uint64_t sectors = f::sectors_before_chunks(spec.format_version) +
                           (spec.survey ? f::kSurveySectors : f::chunks_for(events) * f::kChunkSectors);
  if (lba + sectors > m_label.total_sectors)
    return make_error(ErrorKind::Usage,
                      fmt::format("{}: a session of {} events needs {} MiB from LBA {}, but the disk ends at "
                                  "LBA {} (make a bigger disk with ett mkdisk --size)",
                                  m_path, events, (sectors * f::kSectorSize + (1 << 20) - 1) >> 20, lba,
                                  m_label.total_sectors));
  // The layout fields come from the kernel's own codec; the capture facts from the spec.
  f::SessionHeader header;
  std::memset(&header, 0, sizeof(header));
  dump::start_session_header(header, m_label, dump::AppendPoint{lba, m_sessions + 1, m_sessions}, events);
  header.format_version = spec.format_version;
  header.reserved_sectors = sectors;
  header.status = static_cast<uint32_t>(spec.status);
  header.flags = spec.flags;
  header.smi_count = spec.smi_count;
  header.tsc_hz = spec.tsc_hz;
  header.tsc_method = static_cast<uint32_t>(f::TscMethod::Pit);
  header.tsc_uncertainty_ppm = 20;
  header.capture_start_tsc = spec.capture_start_tsc;
  header.capture_end_tsc = events ? spec.records.back().tsc + 10 : spec.capture_start_tsc;
  header.buffer_capacity = std::max<uint64_t>(events, 1'000'000);
  header.captured_at_unix = spec.captured_at_unix;
  header.stop_reason = static_cast<uint32_t>(spec.stop_reason);
  header.probe_source = static_cast<uint32_t>(spec.probe_source);
  header.layout = static_cast<uint32_t>(spec.layout);
  header.mode = static_cast<uint32_t>(spec.survey ? f::CaptureMode::Survey : spec.mode);
  header.initial_lines = spec.initial_lines;
  header.final_lines = events ? spec.records.back().lines : spec.initial_lines;
  header.filter_mask = 0xFF;
  if (spec.uuid_override) std::memcpy(header.disk_uuid, spec.uuid_override, sizeof(header.disk_uuid));
  std::memcpy(header.cpu_vendor, spec.cpu_vendor.data(),
              std::min(spec.cpu_vendor.size(), sizeof(header.cpu_vendor) - 1));
  std::memcpy(header.cpu_brand, spec.cpu_brand.data(),
              std::min(spec.cpu_brand.size(), sizeof(header.cpu_brand) - 1));
  std::memcpy(header.cmdline, spec.cmdline.data(), std::min(spec.cmdline.size(), sizeof(header.cmdline) - 1));
  if (spec.format_version >= 2) {
    std::vector<f::StallRecord> stalls = spec.stalls;
    std::sort(stalls.begin(), stalls.end(), [](auto& a, auto& b) { return a.start_tsc < b.start_tsc; });
    header.stall_count = spec.stall_count ? spec.stall_count : static_cast<uint32_t>(stalls.size());
    header.typical_check_ticks = spec.typical_check_ticks;
    header.longest_check_ticks = spec.longest_check_ticks;
    header.stall_threshold_ticks = spec.stall_threshold_ticks;
    for (const f::StallRecord& stall : stalls)
      header.longest_stall_ticks = std::max(header.longest_stall_ticks, stall.length_ticks);
    auto table = std::make_unique<dump::StallTable>();
    dump::build_stall_table(*table, header, stalls.data(), static_cast<uint32_t>(stalls.size()), fast_crc32c);
    ETT_TRY(write_at(table.get(), sizeof(*table), (lba + 1) * f::kSectorSize));
  }
  if (spec.survey) {
    f::SurveyBlock block = *spec.survey;
    block.crc = fast_crc32c(&block, offsetof(f::SurveyBlock, crc));
    ETT_TRY(write_at(&block, sizeof(block),
                     (lba + f::sectors_before_chunks(spec.format_version)) * f::kSectorSize));
  }
  dump::seal(header);
  ETT_TRY(write_at(&header, sizeof(header), lba * f::kSectorSize));

  if (spec.write_chunks) {
    // Runs of consecutive chunks go out in one write (the benchmark writes 10 million events).
    constexpr uint64_t kBatch = 32;
    std::vector<uint8_t> batch(kBatch * f::kChunkBytes);
    uint64_t batch_first = 0, batch_count = 0;
    auto flush = [&]() -> Status {
      if (batch_count == 0) return {};
      auto wrote = write_at(batch.data(), batch_count * f::kChunkBytes,
                            chunk_lba(lba, batch_first, spec.format_version) * f::kSectorSize);
      batch_count = 0;
      return wrote;
    };
    for (uint64_t c = 0; c < header.chunk_count; ++c) {
      if (c < spec.skip_chunk.size() && spec.skip_chunk[c]) {
        ETT_TRY(flush());
        continue;
      }
      if (batch_count == 0) batch_first = c;
      dump::build_chunk(batch.data() + batch_count * f::kChunkBytes, header.session_number, c,
                        spec.records.data(), events, fast_crc32c);
      if (++batch_count == kBatch) ETT_TRY(flush());
    }
    ETT_TRY(flush());
  }
  m_next_lba = lba + sectors;
  ++m_sessions;
  return lba;
}

}  // namespace ett::host
