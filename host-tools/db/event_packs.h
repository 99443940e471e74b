// event_packs.h: a trace's events packed about a thousand to a row, as event_packs holds them beside the
// events table (docs/design/database.md): what a whole-trace read takes, since a binary COPY of 10 M events
// rows costs PostgreSQL 2.0-2.8 s and the same events as 8,700 packed rows 0.3 s, and SQLite's scan of the
// rows 0.9 s against 0.07 s for the packs.
//
// A pack is its first seq, last seq, number of events and its data: per event, in seq order,
//   - a varint: seq - the previous event's seq (the pack's first event: seq - first_seq, so 0);
//   - a varint: zigzag(tsc - the previous event's tsc), the difference taken modulo 2^64 (the pack's first
//     event: its tsc);
//   - three bytes: probe, code, lines.
// A varint is 7 bits a byte, least significant first, the top bit set on every byte but the last. An event
// takes 1 + 2 to 4 + 3 bytes as a capture stamps them, at most kMostPackedEventBytes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "db/event_reader.h"
#include "image/trace_image.h"

namespace ett::host {

struct EventPack {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint32_t events = 0;
  std::string data;
};

// The most bytes one event takes in a pack (two 10-byte varints and three bytes).
inline constexpr size_t kMostPackedEventBytes = 23;
// A pack's data stays at or under this many bytes, so that a row of event_packs fits in one 8 KB page of
// PostgreSQL (stored PLAIN: neither compressed nor cut into TOAST chunks, each of which costs an index
// entry) and inside a leaf of SQLite's b-tree (64 KB pages), not in overflow pages.
inline constexpr size_t kPackBytes = 8000;

// Packs events given in seq order (rising seqs) into packs of at most kPackBytes.
class EventPacker {
 public:
  void add(const Event& event);
  // Closes the open pack; take() then moves out every pack, in seq order.
  void finish();
  std::vector<EventPack> take() { return std::move(m_packs); }

 private:
  void close();  // the open pack, which has events

  std::vector<EventPack> m_packs;
  EventPack m_open;
  size_t m_used = 0;  // bytes of m_open.data written (its size is kPackBytes while it is open)
  uint64_t m_last_seq = 0;
  uint64_t m_last_tsc = 0;
};

// Appends the events of one pack to `batch` as rows (time_ns not set), handing the batch to `full` and
// clearing it whenever it reaches kEventBatchRows (the caller hands on what is left after its last pack). An
// error names what is wrong with the pack: data cut short or left over, a count or last seq other than its
// columns say, seqs that do not rise.
using FullBatch = std::function<Status(std::span<const EventRow> rows)>;
Status unpack_events(uint64_t first_seq, uint64_t last_seq, uint64_t events, std::string_view data,
                     std::vector<EventRow>& batch, const FullBatch& full);

// What a read of trace `trace_id` from its packs needs first, as one row: its first pack's first_seq, its
// last pack's last_seq (each one step down the primary key: no pack is read, where a sum over the packs read
// every page of them before the read itself, about 10 ms of SQLite's 0.13 s histogram by code of 10 M events)
// and the sum of its event_codes, the events the same load packed. A NULL first_seq: the trace has no packs
// (loaded before event_packs) and is read from events.
std::string packed_trace_sql(int64_t trace_id);

// That row, for a trace that has packs.
struct PackedTrace {
  int64_t first_seq = 0;
  int64_t last_seq = 0;
  uint64_t events = 0;  // what its event_codes count
};

// A trace's packs, read in first_seq order: each pack checked (not empty, not
// overlapping the one before) and unpacked, the rows handed to `rows` a batch at a time. `damaged` makes the
// error of a pack that is not what the load wrote from what is wrong with it (the engine names the table and
// the way past it); an error of the sink's is returned as it is.
class PackedTraceReader {
 public:
  using Damaged = std::function<ett::Failure<HostError>(const std::string& what)>;
  PackedTraceReader(EventBatchSink rows, Damaged damaged);
  // The next pack.
  Status add(int64_t first_seq, int64_t last_seq, int64_t events, std::string_view data);
  // After the last pack: the packs must have held `expected` events (PackedTrace::events), or the error is
  // that they did not (packs deleted by hand, say); then hands on the rows left.
  Status finish(uint64_t expected);

 private:
  EventBatchSink m_rows;
  Damaged m_damaged;
  std::vector<EventRow> m_batch;
  bool m_any = false;
  uint64_t m_last_seq = 0;
  uint64_t m_events = 0;
};

}  // namespace ett::host
