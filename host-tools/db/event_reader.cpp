// event_reader.cpp: what both engines' event readers share: a big trace read as parts at once, and such a
// read handed on as one stream in seq order.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "common/on_threads.h"
#include "db/event_reader_parts.h"

namespace ett::host {

std::vector<SeqRange> split_range(int64_t first, int64_t last, int count) {
  std::vector<SeqRange> parts;
  const int64_t size = last - first + 1;
  count = static_cast<int>(std::clamp<int64_t>(size, 1, std::max(count, 1)));
  for (int i = 0; i < count; ++i) {
    const int64_t begin = first + size / count * i;
    const int64_t end = i + 1 == count ? last : first + size / count * (i + 1) - 1;
    parts.push_back({begin, end});
  }
  return parts;
}

Status read_parts(const std::vector<SeqRange>& parts, const PartRead& read, EventPartSink& sink) {
  ETT_TRY(sink.begin(parts));
  std::atomic<bool> stop = false;
  std::vector<Status> results(parts.size());
  auto run = [&](size_t part) {
    results[part] = read(
        part, [&](std::span<const EventRow> rows) { return sink.take(part, rows); },
        [&] { return sink.restart(part); }, &stop);
    if (!results[part]) stop = true;
  };
  for_each_on_threads(parts.size(), run);
  for (const Status& result : results)
    if (!result) return result;
  return {};
}

namespace {

// A held row in 16 bytes where an EventRow takes 32: its seq as an offset from its chunk's first, and its
// time_ns (a column most reads leave out) beside it only in a chunk that has one. A held 5 M-row part is
// 80 MB of memory touched for the first time instead of 160.
struct HeldRow {
  uint64_t tsc;
  uint32_t seq_offset;
  uint8_t probe;
  uint8_t code;
  uint8_t lines;
  bool has_time_ns;
};
static_assert(sizeof(HeldRow) == 16);

// A held part is a list of chunks of fixed size, filled in turn: a growing vector copied its rows at every
// doubling and touched about twice their memory.
class HeldChunk {
 public:
  static constexpr size_t kRows = size_t{1} << 19;  // 8 MB of rows: a block that gets huge pages

  explicit HeldChunk(uint64_t first_seq) : m_first_seq(first_seq) { m_rows.reserve(kRows); }

  // Whether `row` goes into this chunk (else into a new one): room, and its seq within 2^32 after the first.
  bool fits(const EventRow& row) const {
    return m_rows.size() < kRows && row.seq >= m_first_seq && row.seq - m_first_seq <= UINT32_MAX;
  }
  void add(const EventRow& row) {
    if (row.has_time_ns && !m_with_time_ns) {
      m_with_time_ns = true;
      m_time_ns.reserve(kRows);
      m_time_ns.resize(m_rows.size());
    }
    m_rows.push_back({row.tsc, static_cast<uint32_t>(row.seq - m_first_seq), row.probe, row.code, row.lines,
                      row.has_time_ns});
    if (m_with_time_ns) m_time_ns.push_back(row.time_ns);
  }
  size_t size() const { return m_rows.size(); }
  void release() {
    std::vector<HeldRow>().swap(m_rows);
    std::vector<int64_t>().swap(m_time_ns);
  }
  // Rows [begin, begin + out.size()) as EventRows.
  void expand(size_t begin, std::span<EventRow> out) const {
    for (size_t i = 0; i < out.size(); ++i) {
      const HeldRow& held = m_rows[begin + i];
      out[i] = {m_first_seq + held.seq_offset,
                held.tsc,
                held.has_time_ns ? m_time_ns[begin + i] : 0,
                held.probe,
                held.code,
                held.lines,
                held.has_time_ns};
    }
  }

 private:
  uint64_t m_first_seq;
  std::vector<HeldRow> m_rows;
  std::vector<int64_t> m_time_ns;  // per row, once a row has one (m_with_time_ns; empty until then)
  bool m_with_time_ns = false;
};

// The first part straight to the caller's sink; the others into memory, handed on after it.
class InOrder final : public EventPartSink {
 public:
  InOrder(const EventBatchSink& sink, const StreamRestart& restart) : m_sink(sink), m_restart(restart) {}

  Status begin(std::span<const SeqRange> parts) override {
    m_held.assign(parts.size(), {});
    return {};
  }
  Status take(size_t part, std::span<const EventRow> rows) override {
    if (part == 0) {
      m_handed_on = true;
      return m_sink(rows);
    }
    std::vector<HeldChunk>& chunks = m_held[part];
    for (const EventRow& row : rows) {
      if (chunks.empty() || !chunks.back().fits(row)) chunks.emplace_back(row.seq);
      chunks.back().add(row);
    }
    return {};
  }
  Status restart(size_t part) override {
    if (part != 0) {
      m_held[part].clear();
      return {};
    }
    if (!m_handed_on) return {};
    if (!m_restart) return make_error(ErrorKind::Io, "reading events: rows out of seq order");
    return m_restart();
  }
  bool restartable(size_t part) const override { return part != 0 || m_restart; }
  Status finish() {
    std::vector<EventRow> batch(kEventBatchRows);
    for (size_t part = 1; part < m_held.size(); ++part) {
      for (HeldChunk& chunk : m_held[part]) {
        for (size_t begin = 0; begin < chunk.size(); begin += kEventBatchRows) {
          const std::span<EventRow> rows(batch.data(), std::min(kEventBatchRows, chunk.size() - begin));
          chunk.expand(begin, rows);
          ETT_TRY(m_sink(rows));
        }
        chunk.release();  // handed on: its memory goes back at once
      }
      m_held[part] = {};
    }
    return {};
  }

 private:
  const EventBatchSink& m_sink;
  const StreamRestart& m_restart;
  std::vector<std::vector<HeldChunk>> m_held;  // per part, its chunks
  bool m_handed_on = false;
};

}  // namespace

Status read_in_order(const std::function<Status(EventPartSink& parts)>& read, const EventBatchSink& sink,
                     const StreamRestart& restart) {
  InOrder in_order(sink, restart);
  ETT_TRY(read(in_order));
  return in_order.finish();
}

}  // namespace ett::host
