// written_behind.cpp: one block written by the thread while the caller gathers the next.
#include "export/written_behind.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace ett::host {

// The thread that writes the blocks: one at a time. An exception of the writing is thrown to the caller at
// its next hand-over or wait.
class EventsWrittenBehind::Thread {
 public:
  explicit Thread(const Write& write) : m_write(write), m_thread([this] { run(); }) {}
  ~Thread() {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_changed.notify_all();
    m_thread.join();
  }
  // Waits for the block before, then takes `block` and `ends` (swapped with the ones written before, for
  // reuse).
  void hand_over(std::vector<AnalysisEvent>& block, std::vector<ActionEnds>& ends) {
    std::unique_lock lock(m_mutex);
    wait_idle(lock);
    std::swap(block, m_block);
    std::swap(ends, m_ends);
    m_busy = true;
    lock.unlock();
    m_changed.notify_all();
  }
  // Returns when every block handed over is written.
  void wait() {
    std::unique_lock lock(m_mutex);
    wait_idle(lock);
  }

 private:
  void wait_idle(std::unique_lock<std::mutex>& lock) {
    m_changed.wait(lock, [this] { return !m_busy; });
    if (m_failure) std::rethrow_exception(std::exchange(m_failure, nullptr));
  }
  void run() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      m_changed.wait(lock, [this] { return m_busy || m_stop; });
      if (!m_busy) return;
      lock.unlock();
      std::exception_ptr failure;
      try {
        m_write(m_block, m_ends);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      m_failure = failure;
      m_busy = false;
      m_changed.notify_all();
    }
  }

  const Write& m_write;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<AnalysisEvent> m_block;  // being written while m_busy
  std::vector<ActionEnds> m_ends;      // the actions that end in it
  bool m_busy = false;
  bool m_stop = false;
  std::exception_ptr m_failure;
  std::thread m_thread;  // last: started when the rest is ready
};

EventsWrittenBehind::EventsWrittenBehind(Write write) : m_write(std::move(write)) {}

EventsWrittenBehind::~EventsWrittenBehind() = default;

void EventsWrittenBehind::add(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed) {
  if (events.size() >= kBlockEvents) {
    flush();
    return m_write(events, closed);
  }
  if (events.empty()) m_pending_ends.insert(m_pending_ends.end(), closed.begin(), closed.end());
  while (!events.empty()) {
    if (m_pending.capacity() < kBlockEvents) m_pending.reserve(kBlockEvents);
    const size_t now = std::min(kBlockEvents - m_pending.size(), events.size());
    m_pending.insert(m_pending.end(), events.begin(), events.begin() + static_cast<std::ptrdiff_t>(now));
    events = events.subspan(now);
    // The actions that end by the last event taken go with it; all that are left go with the last.
    const uint64_t last_seq = m_pending.back().seq;
    const auto ending = events.empty() ? closed.end()
                                       : std::partition_point(closed.begin(), closed.end(),
                                                              [last_seq](const ActionEnds& action) {
                                                                return action.end_seq <= last_seq;
                                                              });
    // At most one action ends at each event: room for a block's (pages touched as they fill), so that the
    // vector is not copied as it grows.
    if (ending != closed.begin() && m_pending_ends.capacity() < kBlockEvents)
      m_pending_ends.reserve(kBlockEvents);
    m_pending_ends.insert(m_pending_ends.end(), closed.begin(), ending);
    closed = closed.subspan(static_cast<size_t>(ending - closed.begin()));
    if (m_pending.size() < kBlockEvents) return;
    if (!m_thread) m_thread = std::make_unique<Thread>(m_write);
    m_thread->hand_over(m_pending, m_pending_ends);
    m_pending.clear();
    m_pending_ends.clear();
  }
}

void EventsWrittenBehind::flush() {
  if (m_thread) m_thread->wait();
  m_thread.reset();
  if (!m_pending.empty() || !m_pending_ends.empty()) m_write(m_pending, m_pending_ends);
  std::vector<AnalysisEvent>().swap(m_pending);
  std::vector<ActionEnds>().swap(m_pending_ends);
}

}  // namespace ett::host
