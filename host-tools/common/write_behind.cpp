// write_behind.cpp: hands what a big output file holds to the disk and drops its cached pages behind the
// writer.
#include "common/write_behind.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <system_error>

namespace ett::host {

WriteBehind::WriteBehind(int fd, Window window) : m_fd(fd), m_window(window) {
  struct stat status {};
  m_failed = ::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode);  // a pipe or a device: nothing to drop
}

WriteBehind::~WriteBehind() {
  stop();
}

void WriteBehind::wrote(uint64_t end) {
  m_written = end;
  if (end < m_reported + m_window.step_bytes) return;
  m_reported = end;
  {
    std::lock_guard lock(m_mutex);
    if (m_failed) return;
    m_end = end;
    if (!m_thread.joinable()) {
      if (end < m_window.keep_bytes) return;
      try {
        m_thread = std::thread([this] { run(); });
      } catch (const std::system_error&) {
        m_failed = true;  // no thread to spare: the file is written as without it
        return;
      }
    }
  }
  m_wake.notify_one();
}

void WriteBehind::settle() {
  std::unique_lock lock(m_mutex);
  m_end = m_written;
  if (!m_thread.joinable() || m_failed) return;
  m_settle = true;
  m_wake.notify_one();
  m_handled.wait(lock, [this] { return m_failed || m_done == m_end; });
  m_settle = false;
}

void WriteBehind::restart() {
  stop();
  std::lock_guard lock(m_mutex);
  m_written = m_reported = m_end = m_done = 0;
  m_stop = m_settle = false;
}

void WriteBehind::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_one();
  if (m_thread.joinable()) m_thread.join();
}

bool WriteBehind::stopping() {
  std::lock_guard lock(m_mutex);
  return m_stop;
}

void WriteBehind::run() {
  uint64_t started = 0;  // [0, started) handed to the disk
  uint64_t dropped = 0;  // [0, dropped) written back and dropped from the page cache
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait(lock, [&] {
      return m_stop || m_end >= started + m_window.step_bytes || (m_settle && m_end > m_done);
    });
    if (m_stop) return;
    const uint64_t end = m_end;
    lock.unlock();
    // A step at a time, the write-out started and the pages dropped alike, so that stop() waits for one call
    // about one step at most, however far behind a slow disk has left this thread.
    bool ok = true;
    while (ok && started < end && !stopping()) {
      const uint64_t until = std::min(end, started + m_window.step_bytes);
      ok = ::sync_file_range(m_fd, static_cast<off64_t>(started), static_cast<off64_t>(until - started),
                             SYNC_FILE_RANGE_WRITE) == 0;
      started = until;
    }
    const uint64_t drop_end = started > m_window.keep_bytes ? started - m_window.keep_bytes : 0;
    while (ok && dropped < drop_end && !stopping()) {
      const uint64_t until = std::min(drop_end, dropped + m_window.step_bytes);
      const auto offset = static_cast<off64_t>(dropped), length = static_cast<off64_t>(until - dropped);
      ok = ::sync_file_range(
               m_fd, offset, length,
               SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0 &&
           ::posix_fadvise(m_fd, offset, length, POSIX_FADV_DONTNEED) == 0;
      dropped = until;
    }
    lock.lock();
    m_done = started;
    if (!ok) m_failed = true;
    m_handled.notify_all();
    if (m_failed) return;
  }
}

}  // namespace ett::host
