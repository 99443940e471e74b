// event_source.h: the events a load inserts (or `ett extract` writes), in seq order, read through feeds a
// block at a time: from memory, or from a trace disk's session decoded as it is read, so that a session of
// any size goes through in constant memory. The two halves of the events can be read at once by two feeds
// (PostgreSQL fills a trace's two partitions at once).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"
#include "image/trace_image.h"

namespace ett::host {

// The next block of events, valid until the next call; an empty span after the last. An error ends the feed.
using EventFeed = std::function<Expected<std::span<const Event>>()>;

class EventSource {
 public:
  // Where the events can be cut in two: the first event of the second part, by place and seq (every event
  // before it has a lower seq, every one from it on at least this one).
  struct Cut {
    uint64_t index = 0;
    uint64_t seq = 0;
  };

  virtual ~EventSource() = default;
  virtual uint64_t size() const = 0;
  // A cut near the middle; nullopt when the seqs do not rise or a part would be empty.
  virtual std::optional<Cut> middle() const = 0;
  // The events [begin, end), each of begin and end one of 0, middle()->index and size(). A feed holds what
  // it needs, so that feeds of both parts can be read at once, each on a thread of its own.
  virtual EventFeed feed(uint64_t begin, uint64_t end) const = 0;
};

// Events in memory, fed in slices of kSliceEvents.
class EventSpan final : public EventSource {
 public:
  static constexpr size_t kSliceEvents = size_t{1} << 16;

  explicit EventSpan(std::span<const Event> events) : m_events(events) {}
  uint64_t size() const override { return m_events.size(); }
  std::optional<Cut> middle() const override;
  EventFeed feed(uint64_t begin, uint64_t end) const override;

 private:
  std::span<const Event> m_events;
};

class SessionStream;

// The error of a session (number `session` of the image at `path`) that held `expected` events when it was
// checked and `found` when it was read again: the image changed in between.
ett::Failure<HostError> session_changed(const std::string& path, uint32_t session, uint64_t found,
                                        uint64_t expected);

// A feed of `stream`'s blocks that ends in session_changed's error unless they hold `expected` events.
EventFeed checked_feed(std::shared_ptr<SessionStream> stream, uint64_t expected, std::string path,
                       uint32_t session);

// One session of a trace disk, read once by scan() for what the load counts and checks, and then once more,
// a block at a time, by each feed (SessionStream: the whole session, or the chunks of each half), in seq
// order. The seqs of a session rise, chunk after chunk; its middle cut is the first good chunk of its second
// half. A feed that does not find the chunks that scan() found (the image changed in between) ends in an
// error.
class SessionEvents final : public EventSource {
 public:
  using Observer = std::function<void(std::span<const Event>)>;

  // sessions()[index] of `image`, which must outlive this and its feeds.
  SessionEvents(const TraceImage& image, size_t index);
  // Checks every chunk (summary()) and hands each good chunk's events to `observe`, in seq order.
  Status scan(const Observer& observe);
  const SessionSummary& summary() const { return m_summary; }

  uint64_t size() const override { return m_summary.recovered_events; }
  std::optional<Cut> middle() const override;
  EventFeed feed(uint64_t begin, uint64_t end) const override;

 private:
  const TraceImage& m_image;
  size_t m_index;
  SessionSummary m_summary;
  uint64_t m_middle_chunk = 0;   // the first chunk of the second half
  uint64_t m_before_middle = 0;  // good events in the chunks before it
};

}  // namespace ett::host
