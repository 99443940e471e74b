// trace_image.h: reads a trace disk (image file or block device): the label, the session chain, the events.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ett/trace_format.h"

namespace ett::host {

// One decoded EventRecord with its sequence number in the session (0-based, gaps only in recovered sessions).
struct Event {
  uint64_t seq = 0;
  uint64_t tsc = 0;
  uint8_t probe = 0;
  uint8_t code = 0;
  uint8_t lines = 0;
  uint8_t flags = 0;
  uint32_t aux = 0;

  bool operator==(const Event&) const = default;
};

enum class SessionHealth {
  Ok,         // Complete, every chunk good
  Partial,    // status Writing: the dump was cut off; the good chunks are recovered
  Corrupt,    // Complete, but a chunk (or the header's numbers) fails a check
  Truncated,  // Complete, but the image ends before its last chunk
};
const char* health_name(SessionHealth health);

struct SessionProblem {
  std::optional<uint64_t> chunk_index;  // nullopt: the problem is in the session header
  uint64_t lba = 0;
  std::string what;  // "bad CRC (stored 0x..., computed 0x...)", "never written", ...
};

// A session header plus what checking its chunks found.
struct SessionSummary {
  format::SessionHeader header{};
  SessionHealth health = SessionHealth::Ok;
  uint64_t expected_events = 0;   // header.event_count
  uint64_t recovered_events = 0;  // events in chunks that passed every check
  uint64_t good_chunks = 0;
  std::vector<SessionProblem> problems;
  // The stall table's records (session format 2; none in version 1), in time order, when its CRC is good.
  std::vector<format::StallRecord> stalls;

  // One line: "ok", "partial: 2000 of 5000 events recovered", "corrupt: chunk 3 (LBA 201): bad CRC ...".
  std::string describe() const;
};

// Takes one chunk's events; false stops the scan.
using EventChunkSink = std::function<bool(std::span<const Event>)>;

// Chunks [begin, end) of a session (end past its last chunk: to the end).
struct ChunkRange {
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};

struct SessionData {
  SessionSummary summary;
  std::vector<Event> events;  // in sequence order
};

class TraceImage {
 public:
  // Opens read-only, validates the label and walks the session chain (headers only; chunks are read later).
  // A file that is not a disk image but a serial log of dump=serial (ETTX lines) is decoded into the image
  // it describes and read the same way.
  static Expected<TraceImage> open(const std::string& path);
  bool is_serial_log() const { return m_memory.has_value(); }

  const std::string& path() const { return m_path; }
  uint64_t size_bytes() const { return m_size; }
  const format::DiskLabel& label() const { return m_label; }
  std::string disk_name() const;
  // Session headers in disk order (oldest first).
  const std::vector<format::SessionHeader>& sessions() const { return m_sessions; }
  // Why the chain ended early, when it ended at a damaged header ("" when it ended normally).
  const std::string& chain_problem() const { return m_chain_problem; }
  // The walk reached the end of the image where its label describes more sectors: the image was cut, and a
  // session header may have been cut off with it ("" when not).
  const std::string& cut_short() const { return m_cut_short; }
  // Set when the file is shorter than the label's total_sectors.
  const std::string& size_warning() const { return m_size_warning; }

  // Index into sessions() of session `number`, or of the newest session when nullopt.
  // Errors: EmptyDisk, NoSuchSession, BadCrc (the newest session's header is damaged).
  Expected<size_t> find_session(std::optional<uint32_t> number) const;

  // Reads and checks every chunk of sessions()[index]; the events are kept only by read_session.
  Expected<SessionSummary> check_session(size_t index) const;
  Expected<SessionData> read_session(size_t index) const;
  // The same, each good chunk's events handed to `sink` as they are decoded (in seq order) and kept by no
  // one: a session of any size in a chunk's memory. A sink that returns false stops the scan, which then
  // returns an Interrupted error. `chunks` limits the scan to some of the session's chunks; the summary then
  // counts and reports those alone.
  Status stream_session(size_t index, SessionSummary& summary, const EventChunkSink& sink,
                        ChunkRange chunks = {}) const;
  // `size` bytes at byte `offset` of the image (or of the decoded serial log): what a session holds besides
  // its chunks (a survey session's SurveyBlock). Errors: Truncated when the image ends first, Io.
  Status read_at(void* buffer, size_t size, uint64_t offset) const {
    return read_exact(buffer, size, offset);
  }

 private:
  TraceImage() = default;
  Status read_label();
  Status walk_sessions();
  Status read_exact(void* buffer, size_t size, uint64_t offset) const;
  // Keeps the events in `events`, hands them to `sink`, or neither (when both are null).
  Status scan_session(size_t index, SessionSummary& summary, std::vector<Event>* events,
                      const EventChunkSink* sink, ChunkRange chunks = {}) const;

  std::string m_path;
  UniqueFd m_fd;
  std::optional<std::vector<uint8_t>> m_memory;  // the decoded serial log, when it is one
  uint64_t m_size = 0;
  format::DiskLabel m_label{};
  std::vector<format::SessionHeader> m_sessions;
  std::string m_chain_problem;
  std::string m_cut_short;
  std::string m_size_warning;
};

// An error for a session that must not be exported (Corrupt -> BadCrc, Truncated -> Truncated).
// With `salvage`, a corrupt, truncated or partial session is usable too when some of its chunks are good and
// its header is whole: what the good chunks hold is read, the rest reported by lost_ranges().
Status require_usable(const std::string& path, const SessionSummary& summary, bool salvage = false);

// A run of events a session's header counts but no good chunk holds (a chunk with a bad CRC, never written,
// beyond the end of the image): seqs first_seq..last_seq, both included.
struct LostRange {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  std::string reason;  // the first chunk's problem: "chunk 3 (LBA 201): bad CRC (...)"
  uint64_t events() const { return last_seq - first_seq + 1; }
};
// The lost runs of a checked session, neighbouring chunks' runs joined, in seq order. Empty for a session
// whose header is damaged (nothing of it is read) or that lost nothing.
std::vector<LostRange> lost_ranges(const SessionSummary& summary);
// "1000-1999, 5000-5999 (2000 events)": for messages.
std::string lost_ranges_text(const std::vector<LostRange>& ranges);

}  // namespace ett::host
