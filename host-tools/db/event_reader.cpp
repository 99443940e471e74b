// event_reader.cpp: what both engines' event readers share: a big trace read as parts at once, and such a
// read handed on as one stream in seq order.
#include <algorithm>
#include <thread>
#include <vector>

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
  std::vector<std::thread> threads;
  for (size_t part = 1; part < parts.size(); ++part) threads.emplace_back(run, part);
  if (!parts.empty()) run(0);
  for (std::thread& thread : threads) thread.join();
  for (const Status& result : results)
    if (!result) return result;
  return {};
}

namespace {

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
    std::vector<std::vector<EventRow>>& chunks = m_held[part];
    while (!rows.empty()) {
      if (chunks.empty() || chunks.back().size() == kHeldChunkRows)
        chunks.emplace_back().reserve(kHeldChunkRows);
      std::vector<EventRow>& chunk = chunks.back();
      const size_t count = std::min(rows.size(), kHeldChunkRows - chunk.size());
      chunk.insert(chunk.end(), rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(count));
      rows = rows.subspan(count);
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
    for (size_t part = 1; part < m_held.size(); ++part) {
      for (std::vector<EventRow>& chunk : m_held[part]) {
        const std::span<const EventRow> rows = chunk;
        for (size_t begin = 0; begin < rows.size(); begin += kEventBatchRows)
          ETT_TRY(m_sink(rows.subspan(begin, std::min(kEventBatchRows, rows.size() - begin))));
        std::vector<EventRow>().swap(chunk);  // handed on: its memory goes back at once
      }
      m_held[part] = {};
    }
    return {};
  }

 private:
  // A held part is a list of chunks of fixed size, filled in turn: a growing vector copied its rows at every
  // doubling and touched about twice their memory (a 5 M-row part: 160 MB of rows, 300 MB of fresh pages).
  static constexpr size_t kHeldChunkRows = size_t{1} << 18;  // 8 MB of rows

  const EventBatchSink& m_sink;
  const StreamRestart& m_restart;
  std::vector<std::vector<std::vector<EventRow>>> m_held;  // per part, its chunks
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
