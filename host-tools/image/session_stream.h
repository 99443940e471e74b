// session_stream.h: one session of a trace disk decoded on a thread of its own, a few blocks ahead of the
// reader that takes them (`ett load`): a session of any size in constant memory, and the decoding beside the
// work that consumes it instead of before it.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "common/status.h"
#include "image/trace_image.h"

namespace ett::host {

class SessionStream {
 public:
  // Events per block (32 chunks' worth: 65,472 events, 1.5 MB) and blocks in flight: the decoder runs at
  // most kBlocks - 1 blocks ahead of the one the reader holds.
  static constexpr size_t kBlockEvents = 32 * size_t{format::kRecordsPerChunk};
  static constexpr size_t kBlocks = 4;
  // Called on the decoding thread with each block before it is handed over: counts and hashes that the
  // reader's thread need not spend its time on.
  using Observer = std::function<void(std::span<const Event>)>;

  // Decodes sessions()[index] of `image` (those of its chunks in `chunks`), which must outlive the stream;
  // nothing is read before next().
  SessionStream(const TraceImage& image, size_t index, Observer observe = {}, ChunkRange chunks = {});
  // Stops the decoding where it is and waits for its thread.
  ~SessionStream();
  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // The next block of the session's good chunks' events, in seq order, valid until the next call; an empty
  // span at the end. An error when the image could not be read (summary() then says what was read).
  Expected<std::span<const Event>> next();
  // What checking the chunks found (TraceImage::check_session's summary); complete once next() has returned
  // the empty span.
  const SessionSummary& summary() const { return m_summary; }

 private:
  void decode();
  // On the decoding thread: waits for a free block; false when the stream is being stopped.
  bool wait_for_free_block();
  // On the decoding thread: hands the block being filled to the reader.
  void hand_over();

  const TraceImage& m_image;
  const size_t m_index;
  const Observer m_observe;
  const ChunkRange m_chunks;
  SessionSummary m_summary;
  Status m_status;
  std::array<std::vector<Event>, kBlocks> m_blocks;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  uint64_t m_filled = 0;  // blocks handed over (block m_filled % kBlocks is the one being filled)
  uint64_t m_taken = 0;   // blocks the reader is done with (block m_taken % kBlocks is the one it holds)
  bool m_holding = false;
  bool m_done = false;  // the decoder has handed over its last block
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace ett::host
