// trace_image.cpp: label validation, the session-chain walk and chunk decoding with CRC32C checks.
#include "image/trace_image.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/fast_crc32c.h"
#include "ett/crc32c.h"
#include "image/serial_log.h"

namespace ett::host {

namespace f = ett::format;

namespace {

// Chunks read per pread: 4 MiB keeps the disk streaming without holding a whole session twice.
constexpr uint64_t kChunksPerRead = 128;

// A large capture decodes into hundreds of MB of fresh memory: with 4 KiB pages, the page faults that first
// touch it cost about as much as the decoding (perf). Transparent huge pages (where the system offers them on
// request) fault it in 2 MiB at a time. Only advice: nothing changes when the system says no.
void advise_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (bytes < 2 * kHugePage) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

template <size_t N>
bool has_magic(const char* field, const char (&magic)[N]) {
  return std::memcmp(field, magic, N) == 0;
}

template <size_t N>
int magic_bytes_matching(const char* field, const char (&magic)[N]) {
  int count = 0;
  for (size_t i = 0; i < N; ++i) count += field[i] == magic[i];
  return count;
}

uint32_t sector_crc(const void* sector) {
  return crc32c(sector, f::kSectorSize - 4);
}

// A survey session's block problem says where it is itself ("survey block at LBA 17: bad CRC ...").
bool is_survey_problem(const SessionProblem& problem) {
  return problem.what.find("survey block") != std::string::npos;
}

std::string problem_text(const SessionProblem& problem) {
  if (is_survey_problem(problem)) return problem.what;
  if (!problem.chunk_index) return fmt::format("session header (LBA {}): {}", problem.lba, problem.what);
  return fmt::format("chunk {} (LBA {}): {}", *problem.chunk_index, problem.lba, problem.what);
}

}  // namespace

const char* health_name(SessionHealth health) {
  switch (health) {
    case SessionHealth::Ok:
      return "ok";
    case SessionHealth::Partial:
      return "partial";
    case SessionHealth::Corrupt:
      return "corrupt";
    case SessionHealth::Truncated:
      return "truncated";
  }
  return "unknown";
}

std::string SessionSummary::describe() const {
  switch (health) {
    case SessionHealth::Ok:
      return "ok";
    case SessionHealth::Partial:
      return fmt::format("partial: {} of {} events recovered ({} of {} chunk{} good; the dump was cut off)",
                         recovered_events, expected_events, good_chunks, header.chunk_count,
                         header.chunk_count == 1 ? "" : "s");
    case SessionHealth::Truncated: {
      if (!problems.empty() && is_survey_problem(problems.front()))
        return "truncated: " + problems.front().what;
      auto first_missing = std::find_if(problems.begin(), problems.end(), [](const SessionProblem& p) {
        return p.what == "beyond the end of the image";
      });
      uint64_t chunk =
          first_missing != problems.end() && first_missing->chunk_index ? *first_missing->chunk_index : 0;
      return fmt::format("truncated: the image ends before chunk {} (the session has {} chunk{})", chunk,
                         header.chunk_count, header.chunk_count == 1 ? "" : "s");
    }
    case SessionHealth::Corrupt: {
      if (problems.empty()) return "corrupt";
      std::string text = "corrupt: " + problem_text(problems.front());
      if (problems.size() > 1) text += fmt::format(" (and {} more bad chunks)", problems.size() - 1);
      return text;
    }
  }
  return "unknown";
}

Expected<TraceImage> TraceImage::open(const std::string& path) {
  TraceImage image;
  image.m_path = path;
  image.m_fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!image.m_fd.valid()) {
    int error = errno;
    return make_error(error == ENOENT ? ErrorKind::Usage : ErrorKind::Io, errno_message(path, error));
  }
  struct stat st {};
  if (::fstat(image.m_fd.get(), &st) != 0) return make_error(ErrorKind::Io, errno_message(path, errno));
  if (S_ISDIR(st.st_mode)) return make_error(ErrorKind::Usage, path + ": is a directory, not a trace disk");
  if (S_ISBLK(st.st_mode)) {
    uint64_t bytes = 0;
    if (::ioctl(image.m_fd.get(), BLKGETSIZE64, &bytes) != 0)
      return make_error(ErrorKind::Io, errno_message(path + ": cannot read the device size", errno));
    image.m_size = bytes;
  } else {
    image.m_size = static_cast<uint64_t>(st.st_size);
  }
  ::posix_fadvise(image.m_fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

  // Detected by content: a disk image starts with its label; a serial log is text with ETTX lines.
  char head[sizeof(format::kDiskMagic)] = {};
  const ssize_t head_bytes = ::pread(image.m_fd.get(), head, sizeof(head), 0);
  const bool labelled = head_bytes == static_cast<ssize_t>(sizeof(head)) &&
                        std::memcmp(head, format::kDiskMagic, sizeof(head)) == 0;
  constexpr uint64_t kMaxLogBytes = 1ull << 30;
  if (!labelled && S_ISREG(st.st_mode) && image.m_size > 0 && image.m_size <= kMaxLogBytes) {
    std::string text(image.m_size, '\0');
    auto read = image.read_exact(text.data(), text.size(), 0);
    if (!read) return read.failure();
    if (looks_like_serial_log(text)) {
      auto decoded = decode_serial_log(text, path);
      if (!decoded) return decoded.failure();
      if (decoded->bad_lines)
        image.m_size_warning = fmt::format("{}: {} damaged ETTX lines dropped (their chunks show as bad)",
                                           path, decoded->bad_lines);
      image.m_memory = std::move(decoded->bytes);
      image.m_size = image.m_memory->size();
    }
  }

  auto label = image.read_label();
  if (!label) return label.failure();
  auto walk = image.walk_sessions();
  if (!walk) return walk.failure();
  return Expected<TraceImage>(std::move(image));
}

Status TraceImage::read_exact(void* buffer, size_t size, uint64_t offset) const {
  auto* bytes = static_cast<uint8_t*>(buffer);
  if (m_memory) {
    if (offset > m_memory->size() || size > m_memory->size() - offset)
      return make_error(ErrorKind::Truncated,
                        fmt::format("{}: serial log truncated: it describes {} bytes, reading {} bytes at {}",
                                    m_path, m_memory->size(), size, offset));
    std::memcpy(bytes, m_memory->data() + offset, size);
    return {};
  }
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(m_fd.get(), bytes + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorKind::Io,
                        errno_message(fmt::format("{}: read at byte {}", m_path, offset + done), errno));
    }
    if (got == 0)
      return make_error(ErrorKind::Truncated,
                        fmt::format("{}: image truncated: it ends at byte {}, reading {} bytes at {}", m_path,
                                    offset + done, size, offset));
    done += static_cast<size_t>(got);
  }
  return {};
}

Status TraceImage::read_label() {
  if (m_size == 0)
    return make_error(ErrorKind::NotTraceDisk, m_path + ": is empty (0 bytes), not a trace disk");
  if (m_size < f::kSectorSize) {
    char head[f::kSectorSize] = {};
    auto read = read_exact(head, m_size, 0);
    if (!read) return read;
    if (std::memcmp(head, f::kDiskMagic, std::min<size_t>(m_size, sizeof(f::kDiskMagic))) == 0)
      return make_error(ErrorKind::Truncated,
                        fmt::format("{}: image truncated: {} bytes, shorter than its {}-byte disk label",
                                    m_path, m_size, f::kSectorSize));
    return make_error(
        ErrorKind::NotTraceDisk,
        fmt::format("{}: not a trace disk ({} bytes, smaller than one sector)", m_path, m_size));
  }
  auto read = read_exact(&m_label, sizeof(m_label), 0);
  if (!read) return read;
  if (!has_magic(m_label.magic, f::kDiskMagic))
    return make_error(
        ErrorKind::NotTraceDisk,
        m_path + ": not a trace disk (no ETTDISK1 label in sector 0); make one with `ett mkdisk`");
  uint32_t computed = sector_crc(&m_label);
  if (computed != m_label.crc) {
    if (m_label.format_version != f::kFormatVersion)
      return make_error(ErrorKind::UnknownVersion,
                        fmt::format("{}: unknown trace format version {} (this ett reads version {}), or a "
                                    "damaged label: its CRC does not match",
                                    m_path, m_label.format_version, f::kFormatVersion));
    return make_error(
        ErrorKind::BadCrc,
        fmt::format("{}: bad CRC in the disk label (stored 0x{:08x}, computed 0x{:08x}): the label "
                    "is damaged",
                    m_path, m_label.crc, computed));
  }
  if (m_label.format_version != f::kFormatVersion)
    return make_error(ErrorKind::UnknownVersion,
                      fmt::format("{}: unknown trace format version {} (this ett reads version {})", m_path,
                                  m_label.format_version, f::kFormatVersion));
  if (m_label.sector_size != f::kSectorSize)
    return make_error(
        ErrorKind::UnknownVersion,
        fmt::format("{}: unsupported sector size {} in the disk label", m_path, m_label.sector_size));
  if (m_label.first_session_lba == 0)
    return make_error(ErrorKind::BadCrc, m_path + ": the disk label puts the first session at LBA 0");
  if (m_size / f::kSectorSize < m_label.total_sectors)
    m_size_warning =
        fmt::format("{}: the image is {} bytes but its label describes {} bytes; it may be truncated", m_path,
                    m_size, m_label.total_sectors * f::kSectorSize);
  return {};
}

Status TraceImage::walk_sessions() {
  const uint64_t sectors = m_size / f::kSectorSize;
  uint64_t lba = m_label.first_session_lba;
  // Every step moves forward by at least one sector, so the walk ends.
  while (lba < sectors) {
    f::SessionHeader header;
    auto read = read_exact(&header, sizeof(header), lba * f::kSectorSize);
    if (!read) return read;
    const bool magic_ok = has_magic(header.magic, f::kSessionMagic);
    const uint32_t computed = sector_crc(&header);
    if (magic_ok && computed == header.crc) {
      // A well-formed header left over from an earlier label of this disk ends the chain like a blank sector.
      if (std::memcmp(header.disk_uuid, m_label.disk_uuid, sizeof(header.disk_uuid)) != 0 ||
          header.start_lba != lba)
        break;
      if (header.reserved_sectors == 0) {
        m_chain_problem = fmt::format("session header at LBA {} reserves 0 sectors", lba);
        break;
      }
      m_sessions.push_back(header);
      if (header.reserved_sectors >= sectors - lba) break;
      lba += header.reserved_sectors;
      continue;
    }
    if (magic_ok) {
      m_chain_problem =
          fmt::format("session header at LBA {} has a bad CRC (stored 0x{:08x}, computed 0x{:08x})", lba,
                      header.crc, computed);
    } else if (magic_bytes_matching(header.magic, f::kSessionMagic) >= 6) {
      m_chain_problem = fmt::format("session header at LBA {} is damaged (its magic is wrong)", lba);
    } else if (lba + 1 < sectors) {
      // A damaged magic is told apart from the blank sector after the last session by what follows it.
      char next[f::kSectorSize];
      auto read_next = read_exact(next, sizeof(next), (lba + 1) * f::kSectorSize);
      if (!read_next) return read_next;
      if (has_magic(next, f::kChunkMagic))
        m_chain_problem = fmt::format(
            "session header at LBA {} is damaged (not a session header, but chunks "
            "follow it)",
            lba);
    }
    break;
  }
  if (lba >= sectors && m_label.total_sectors > sectors)
    m_cut_short = fmt::format(
        "the image ends at LBA {} where its label describes {} sectors: it was cut, and "
        "whatever followed the {} session(s) before is lost",
        sectors, m_label.total_sectors, m_sessions.size());
  return {};
}

std::string TraceImage::disk_name() const {
  return std::string(m_label.name, strnlen(m_label.name, sizeof(m_label.name)));
}

Expected<size_t> TraceImage::find_session(std::optional<uint32_t> number) const {
  if (m_sessions.empty()) {
    if (!m_chain_problem.empty())
      return make_error(ErrorKind::BadCrc,
                        fmt::format("{}: the first session cannot be read: {}", m_path, m_chain_problem));
    if (!m_cut_short.empty())
      return make_error(ErrorKind::Truncated, m_path + ": image truncated: " + m_cut_short);
    return make_error(ErrorKind::EmptyDisk, m_path + ": empty trace disk: it holds no sessions");
  }
  if (!number) {
    if (!m_chain_problem.empty())
      return make_error(ErrorKind::BadCrc,
                        fmt::format("{}: the newest session cannot be read: {}; sessions {}-{} before it are "
                                    "readable (choose one with --session N)",
                                    m_path, m_chain_problem, m_sessions.front().session_number,
                                    m_sessions.back().session_number));
    return m_sessions.size() - 1;
  }
  for (size_t i = 0; i < m_sessions.size(); ++i)
    if (m_sessions[i].session_number == *number) return i;
  return make_error(ErrorKind::NoSuchSession,
                    fmt::format("{}: there is no session {} (the disk holds sessions {}-{}){}", m_path,
                                *number, m_sessions.front().session_number, m_sessions.back().session_number,
                                m_chain_problem.empty() ? "" : "; the chain ends early: " + m_chain_problem));
}

Expected<SessionSummary> TraceImage::check_session(size_t index) const {
  SessionSummary summary;
  auto scan = scan_session(index, summary, nullptr, nullptr);
  if (!scan) return scan.failure();
  return summary;
}

Expected<SessionData> TraceImage::read_session(size_t index) const {
  SessionData data;
  auto scan = scan_session(index, data.summary, &data.events, nullptr);
  if (!scan) return scan.failure();
  return Expected<SessionData>(std::move(data));
}

Status TraceImage::stream_session(size_t index, SessionSummary& summary, const EventChunkSink& sink,
                                  ChunkRange chunks) const {
  return scan_session(index, summary, nullptr, &sink, chunks);
}

Status TraceImage::scan_session(size_t index, SessionSummary& summary, std::vector<Event>* events,
                                const EventChunkSink* sink, ChunkRange chunks) const {
  if (index >= m_sessions.size())
    return make_error(ErrorKind::NoSuchSession, fmt::format("{}: no session at index {}", m_path, index));
  const f::SessionHeader& header = m_sessions[index];
  summary = SessionSummary{};
  summary.header = header;
  summary.expected_events = header.event_count;

  auto header_problem = [&](std::string what) {
    summary.problems.push_back(SessionProblem{std::nullopt, header.start_lba, std::move(what)});
  };
  // Version 1 sessions (before the stall table) are still read: their chunks follow the header.
  if (header.format_version != 1 && header.format_version != f::kSessionFormatVersion)
    header_problem(fmt::format("unknown session format version {}", header.format_version));
  else if (header.status != static_cast<uint32_t>(f::SessionStatus::Writing) &&
           header.status != static_cast<uint32_t>(f::SessionStatus::Complete))
    header_problem(fmt::format("unknown session status {}", header.status));
  else if (header.record_size != sizeof(f::EventRecord) || header.chunk_sectors != f::kChunkSectors)
    header_problem(fmt::format("unexpected record size {} or chunk size {} sectors", header.record_size,
                               header.chunk_sectors));
  else if (header.chunk_count != f::chunks_for(header.event_count))
    header_problem(fmt::format("{} chunks cannot hold {} events", header.chunk_count, header.event_count));
  else if (header.reserved_sectors <
           f::sectors_before_chunks(header.format_version) + header.chunk_count * f::kChunkSectors)
    header_problem(fmt::format("reserves {} sectors, fewer than its {} chunks need", header.reserved_sectors,
                               header.chunk_count));
  else if (header.stall_records > f::kMaxStallRecords)
    header_problem(
        fmt::format("{} stall records, more than the table's {}", header.stall_records, f::kMaxStallRecords));
  if (!summary.problems.empty()) {
    summary.health = SessionHealth::Corrupt;
    return {};
  }

  const bool complete = header.status == static_cast<uint32_t>(f::SessionStatus::Complete);
  const uint64_t image_sectors = m_size / f::kSectorSize;
  const uint64_t first_chunk_lba = header.start_lba + f::sectors_before_chunks(header.format_version);
  if (header.format_version >= 2) {
    // The stall table: between the header and the first chunk, checked by the CRC in the header.
    const uint64_t table_lba = header.start_lba + 1;
    if ((table_lba + f::kStallTableSectors) * f::kSectorSize > m_size) {
      summary.problems.push_back(
          SessionProblem{std::nullopt, table_lba, "stall table beyond the end of the image"});
    } else {
      std::vector<f::StallRecord> table(f::kMaxStallRecords);
      auto read = read_exact(table.data(), table.size() * sizeof(f::StallRecord), table_lba * f::kSectorSize);
      if (!read) return read;
      const uint32_t computed = fast_crc32c(table.data(), table.size() * sizeof(f::StallRecord));
      if (computed != header.stall_table_crc)
        summary.problems.push_back(
            SessionProblem{std::nullopt, table_lba,
                           fmt::format("stall table: bad CRC (stored 0x{:08x}, computed 0x{:08x})",
                                       header.stall_table_crc, computed)});
      else
        summary.stalls.assign(table.begin(), table.begin() + header.stall_records);
    }
  }
  const uint64_t chunks_in_image =
      image_sectors <= first_chunk_lba
          ? 0
          : std::min<uint64_t>(header.chunk_count, (image_sectors - first_chunk_lba) / f::kChunkSectors);
  if (events) {
    events->reserve(std::min<uint64_t>(header.event_count, chunks_in_image * f::kRecordsPerChunk));
    advise_huge_pages(events->data(), events->capacity() * sizeof(Event));
  }

  std::vector<uint8_t> block;
  std::vector<Event> chunk_events;  // one chunk's, for the sink
  bool truncated = false;
  const uint64_t end_chunk = std::min(chunks.end, header.chunk_count);
  for (uint64_t first = chunks.begin; first < end_chunk && !truncated; first += kChunksPerRead) {
    const uint64_t count = std::min<uint64_t>(kChunksPerRead, end_chunk - first);
    const uint64_t readable = first >= chunks_in_image ? 0 : std::min(count, chunks_in_image - first);
    if (readable > 0) {
      block.resize(readable * f::kChunkBytes);
      auto read = read_exact(block.data(), block.size(),
                             (first_chunk_lba + first * f::kChunkSectors) * f::kSectorSize);
      if (!read) return read;
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t chunk_index = first + i;
      const uint64_t lba = first_chunk_lba + chunk_index * f::kChunkSectors;
      auto problem = [&](std::string what) {
        summary.problems.push_back(SessionProblem{chunk_index, lba, std::move(what)});
      };
      if (i >= readable) {
        // Every later chunk is beyond the end too: one problem for the first, not one per chunk (a damaged
        // header that claims 2^40 events would otherwise fill memory with problems).
        truncated = true;
        problem("beyond the end of the image");
        break;
      }
      const uint8_t* chunk = block.data() + i * f::kChunkBytes;
      f::ChunkHeader chunk_header;
      std::memcpy(&chunk_header, chunk, sizeof(chunk_header));
      const uint64_t expected_first_seq = chunk_index * f::kRecordsPerChunk;
      const uint64_t expected_records =
          std::min<uint64_t>(f::kRecordsPerChunk, header.event_count - expected_first_seq);
      const uint32_t computed = crc32c_with_zero_field(chunk, f::kChunkBytes, offsetof(f::ChunkHeader, crc));
      static constexpr char kBlank[4] = {};
      if (has_magic(chunk_header.magic, kBlank) && chunk_header.crc == 0) {
        problem("never written (zeros)");
      } else if (computed != chunk_header.crc) {
        problem(fmt::format("bad CRC (stored 0x{:08x}, computed 0x{:08x})", chunk_header.crc, computed));
      } else if (!has_magic(chunk_header.magic, f::kChunkMagic)) {
        problem("not a chunk (bad magic)");
      } else if (chunk_header.session_number != header.session_number) {
        problem(fmt::format("belongs to session {}", chunk_header.session_number));
      } else if (chunk_header.chunk_index != chunk_index) {
        problem(fmt::format("holds chunk index {}", chunk_header.chunk_index));
      } else if (chunk_header.first_seq != expected_first_seq) {
        problem(fmt::format("first_seq is {}, expected {}", chunk_header.first_seq, expected_first_seq));
      } else if (chunk_header.record_count != expected_records) {
        problem(fmt::format("holds {} records, expected {}", chunk_header.record_count, expected_records));
      } else {
        ++summary.good_chunks;
        summary.recovered_events += chunk_header.record_count;
        std::vector<Event>* out = events ? events : sink ? &chunk_events : nullptr;
        if (out) {
          if (sink) chunk_events.clear();
          const uint8_t* record_bytes = chunk + sizeof(f::ChunkHeader);
          for (uint32_t r = 0; r < chunk_header.record_count; ++r) {
            f::EventRecord record;
            std::memcpy(&record, record_bytes + r * sizeof(record), sizeof(record));
            out->push_back(Event{expected_first_seq + r, record.tsc, record.probe, record.code, record.lines,
                                 record.flags, record.aux});
          }
          if (sink && !(*sink)(chunk_events))
            return make_error(ErrorKind::Interrupted,
                              fmt::format("{}: reading session {} stopped", m_path, header.session_number));
        }
      }
    }
  }
  if (!complete)
    summary.health = SessionHealth::Partial;
  else if (truncated)
    summary.health = SessionHealth::Truncated;
  else if (!summary.problems.empty())
    summary.health = SessionHealth::Corrupt;
  else
    summary.health = SessionHealth::Ok;
  return {};
}

std::vector<LostRange> lost_ranges(const SessionSummary& summary) {
  std::vector<LostRange> ranges;
  const f::SessionHeader& header = summary.header;
  for (const SessionProblem& problem : summary.problems) {
    if (!problem.chunk_index) continue;  // the header or the stall table: no events of their own
    const uint64_t first = *problem.chunk_index * f::kRecordsPerChunk;
    if (first >= header.event_count) continue;
    // The first chunk beyond the end of the image stands for every chunk after it.
    const bool to_end = problem.what == "beyond the end of the image";
    const uint64_t last =
        to_end ? header.event_count - 1 : std::min(first + f::kRecordsPerChunk, header.event_count) - 1;
    if (!ranges.empty() && ranges.back().last_seq + 1 == first) {
      ranges.back().last_seq = last;
      continue;
    }
    ranges.push_back(LostRange{
        first, last, fmt::format("chunk {} (LBA {}): {}", *problem.chunk_index, problem.lba, problem.what)});
  }
  return ranges;
}

std::string lost_ranges_text(const std::vector<LostRange>& ranges) {
  std::string text;
  uint64_t events = 0;
  for (const LostRange& range : ranges) {
    text += fmt::format("{}{}-{}", text.empty() ? "" : ", ", range.first_seq, range.last_seq);
    events += range.events();
  }
  return fmt::format("{} ({} events)", text, events);
}

Status require_usable(const std::string& path, const SessionSummary& summary, bool salvage) {
  const uint32_t number = summary.header.session_number;
  if (salvage && summary.health != SessionHealth::Ok && summary.recovered_events > 0) {
    const bool header_whole =
        std::none_of(summary.problems.begin(), summary.problems.end(), [&](const SessionProblem& problem) {
          return !problem.chunk_index && problem.lba == summary.header.start_lba;
        });
    if (header_whole) return {};
  }
  switch (summary.health) {
    case SessionHealth::Ok:
      return {};
    case SessionHealth::Partial:
      // A dump cut off before its first chunk: nothing to extract is a failure, not an empty success.
      if (summary.recovered_events == 0 && summary.expected_events > 0)
        return make_error(ErrorKind::Truncated,
                          fmt::format("{}: session {} is {}: none of its events could be recovered", path,
                                      number, summary.describe()));
      return {};
    case SessionHealth::Truncated:
      return make_error(ErrorKind::Truncated, fmt::format("{}: image truncated: session {} is {}", path,
                                                          number, summary.describe()));
    case SessionHealth::Corrupt: {
      if (!summary.problems.empty() && summary.problems.front().what.starts_with("bad CRC"))
        return make_error(ErrorKind::BadCrc,
                          fmt::format("{}: bad CRC: session {} is {}", path, number, summary.describe()));
      return make_error(ErrorKind::BadCrc,
                        fmt::format("{}: session {} is {}", path, number, summary.describe()));
    }
  }
  return {};
}

}  // namespace ett::host
