// session_stream.cpp: the decoding thread and the hand-over of blocks between it and the reader.
#include "image/session_stream.h"

namespace ett::host {

SessionStream::SessionStream(const TraceImage& image, size_t index, Observer observe, ChunkRange chunks)
    : m_image(image), m_index(index), m_observe(std::move(observe)), m_chunks(chunks) {}

SessionStream::~SessionStream() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

bool SessionStream::wait_for_free_block() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return m_stop || m_filled - m_taken < kBlocks; });
  return !m_stop;
}

void SessionStream::hand_over() {
  std::vector<Event>& block = m_blocks[m_filled % kBlocks];
  if (m_observe) m_observe(block);
  {
    std::lock_guard lock(m_mutex);
    ++m_filled;
  }
  m_changed.notify_all();
}

void SessionStream::decode() {
  bool stopped = !wait_for_free_block();
  const EventChunkSink sink = [&](std::span<const Event> chunk) {
    std::vector<Event>* block = &m_blocks[m_filled % kBlocks];
    block->insert(block->end(), chunk.begin(), chunk.end());
    if (block->size() + format::kRecordsPerChunk <= kBlockEvents) return true;
    hand_over();
    if (!wait_for_free_block()) return false;
    m_blocks[m_filled % kBlocks].clear();
    return true;
  };
  Status status = stopped ? Status{} : m_image.stream_session(m_index, m_summary, sink, m_chunks);
  if (!stopped && status && !m_blocks[m_filled % kBlocks].empty()) hand_over();
  {
    std::lock_guard lock(m_mutex);
    m_status = std::move(status);
    m_done = true;
  }
  m_changed.notify_all();
}

Expected<std::span<const Event>> SessionStream::next() {
  std::unique_lock lock(m_mutex);
  if (!m_thread.joinable() && !m_done) {
    for (std::vector<Event>& block : m_blocks) block.reserve(kBlockEvents);
    m_thread = std::thread([this] { decode(); });
  }
  if (m_holding) {
    ++m_taken;
    m_holding = false;
    m_changed.notify_all();
  }
  m_changed.wait(lock, [&] { return m_filled > m_taken || m_done; });
  if (m_filled > m_taken) {
    m_holding = true;
    return std::span<const Event>(m_blocks[m_taken % kBlocks]);
  }
  if (!m_status) return m_status.failure();
  return std::span<const Event>();
}

}  // namespace ett::host
