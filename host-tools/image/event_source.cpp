// event_source.cpp: feeds over events in memory and over a session decoded as it is read.
#include "image/event_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "image/session_stream.h"

namespace ett::host {

namespace {

EventFeed failing_feed(HostError error) {
  return [error]() -> Expected<std::span<const Event>> { return make_error(error.kind, error.message); };
}

}  // namespace

std::optional<EventSource::Cut> EventSpan::middle() const {
  if (m_events.size() < 2) return std::nullopt;
  const bool rising =
      std::adjacent_find(m_events.begin(), m_events.end(),
                         [](const Event& a, const Event& b) { return a.seq >= b.seq; }) == m_events.end();
  if (!rising) return std::nullopt;
  const size_t index = m_events.size() / 2;
  return Cut{index, m_events[index].seq};
}

EventFeed EventSpan::feed(uint64_t begin, uint64_t end) const {
  if (begin > end || end > m_events.size())
    return failing_feed({ErrorKind::Usage, fmt::format("no events [{}, {}) among {}", begin, end, size())});
  auto at = std::make_shared<uint64_t>(begin);
  return [events = m_events, at, end]() -> Expected<std::span<const Event>> {
    const uint64_t count = std::min<uint64_t>(kSliceEvents, end - *at);
    const std::span<const Event> slice = events.subspan(*at, count);
    *at += count;
    return slice;
  };
}

SessionEvents::SessionEvents(const TraceImage& image, size_t index) : m_image(image), m_index(index) {}

Status SessionEvents::scan(const Observer& observe) {
  const format::SessionHeader& header = m_image.sessions().at(m_index);
  m_middle_chunk = header.chunk_count / 2;
  const uint64_t middle_seq = m_middle_chunk * format::kRecordsPerChunk;
  m_before_middle = 0;
  return m_image.stream_session(m_index, m_summary, [&](std::span<const Event> chunk) {
    // A chunk's events are all on one side of the cut: chunk i holds seqs from i * kRecordsPerChunk.
    if (!chunk.empty() && chunk.front().seq < middle_seq) m_before_middle += chunk.size();
    if (observe) observe(chunk);
    return true;
  });
}

std::optional<EventSource::Cut> SessionEvents::middle() const {
  if (m_before_middle == 0 || m_before_middle >= size()) return std::nullopt;
  return Cut{m_before_middle, m_middle_chunk * format::kRecordsPerChunk};
}

EventFeed SessionEvents::feed(uint64_t begin, uint64_t end) const {
  const std::optional<Cut> cut = middle();
  // The chunk where event `at` starts (or UINT64_MAX: past the last).
  auto chunk_at = [&](uint64_t at) -> std::optional<uint64_t> {
    if (at == 0) return 0;
    if (at == size()) return UINT64_MAX;
    if (cut && at == cut->index) return m_middle_chunk;
    return std::nullopt;
  };
  const std::optional<uint64_t> first = chunk_at(begin), last = chunk_at(end);
  const uint32_t number = m_summary.header.session_number;
  if (!first || !last || begin > end)
    return failing_feed(
        {ErrorKind::Usage, fmt::format("{}: session {} cannot be fed from event {} to event {}",
                                       m_image.path(), number, begin, end)});
  return checked_feed(
      std::make_shared<SessionStream>(m_image, m_index, SessionStream::Observer{}, ChunkRange{*first, *last}),
      end - begin, m_image.path(), number);
}

ett::Failure<HostError> session_changed(const std::string& path, uint32_t session, uint64_t found,
                                        uint64_t expected) {
  return make_error(ErrorKind::Io, fmt::format("{}: session {} changed while it was read ({} events where it "
                                               "had {})",
                                               path, session, found, expected));
}

EventFeed checked_feed(std::shared_ptr<SessionStream> stream, uint64_t expected, std::string path,
                       uint32_t session) {
  auto fed = std::make_shared<uint64_t>(0);
  return [stream = std::move(stream), fed, expected, path = std::move(path),
          session]() -> Expected<std::span<const Event>> {
    ETT_TRY_ASSIGN(std::span<const Event> block, stream->next());
    *fed += block.size();
    if (*fed > expected || (block.empty() && *fed != expected))
      return session_changed(path, session, *fed, expected);
    return block;
  };
}

}  // namespace ett::host
