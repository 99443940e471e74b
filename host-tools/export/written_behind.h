// written_behind.h: a streamed trace's events gathered into blocks, each written by a thread of its own while
// the caller reads the next block, so that the read and the writing overlap (the Perfetto writers,
// export/perfetto.h).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "analysis/durations.h"

namespace ett::host {

class EventsWrittenBehind {
 public:
  using Write =
      std::function<void(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed)>;
  // `write` gets the events in the order they were added, one block at a time, with the actions added with
  // them whose end seq is at most the block's last event's (in the order they were added), on the thread or
  // (flush, a span held by the caller) on the caller's.
  explicit EventsWrittenBehind(Write write);
  EventsWrittenBehind(const EventsWrittenBehind&) = delete;
  EventsWrittenBehind& operator=(const EventsWrittenBehind&) = delete;
  ~EventsWrittenBehind();

  // Gathers `events` into blocks of kBlockEvents and hands each full block to the thread, with the actions of
  // `closed` (in end seq order: the actions these events close) that end in it. A span of a block or more (a
  // capture held in memory) is written as it is, after the events before it. An exception of a write is
  // thrown here or by flush.
  void add(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed = {});
  // Writes the events gathered and returns when every event added is written; the blocks' memory is freed.
  void flush();

  static constexpr size_t kBlockEvents = size_t{1} << 18;

 private:
  class Thread;
  Write m_write;
  std::vector<AnalysisEvent> m_pending;    // events not yet handed on, up to kBlockEvents
  std::vector<ActionEnds> m_pending_ends;  // the actions that end in them
  std::unique_ptr<Thread> m_thread;        // writing the blocks (made with the first)
};

}  // namespace ett::host
