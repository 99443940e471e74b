// write_behind.h: keeps a big output file from holding the page cache: what was written long enough ago is
// written back to the disk and its cached pages dropped, on a thread of its own, while the writer goes on.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ett::host {

// For a new file written front to back (any other descriptor, a pipe or a device, gets no thread). The writer
// calls wrote(end) after each write(2); once the file holds `keep_bytes` the thread starts: it hands each new
// `step_bytes` of the file to the disk (sync_file_range, SYNC_FILE_RANGE_WRITE) and, for what lies more than
// `keep_bytes` behind the end, waits for that write and drops the pages (POSIX_FADV_DONTNEED). Page-cache
// pages freed this way are the ones the next writes get; without it a 3 GB export takes 3 GB of memory the
// kernel has to find, which on a virtual machine whose host takes back its guest's free memory costs seconds
// per GB (the kernel's copy into new pages; the `fresh memory` line of ett_e2e_bench measures it), and on any
// machine pushes out of the cache what was in it. Only the thread waits for the disk: on a disk slower than
// the writer the pages not yet dropped stay cached, as without it. A file system that cannot do this makes
// the thread stop; the writes go on as before. The file's contents do not depend on any of it.
class WriteBehind {
 public:
  struct Window {
    uint64_t step_bytes = uint64_t{8} << 20;
    uint64_t keep_bytes = uint64_t{64} << 20;
  };

  explicit WriteBehind(int fd) : WriteBehind(fd, Window{}) {}
  WriteBehind(int fd, Window window);
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;
  ~WriteBehind();

  // The file now holds bytes [0, end). Cheap: it wakes the thread once per step.
  void wrote(uint64_t end);
  // Waits until the thread has handled all that wrote() reported, the last partial step too (for tests): what
  // lies more than `keep_bytes` behind the end is then on the disk and out of the page cache.
  void settle();
  // Stops the thread (it finishes the call to the kernel it is in) and starts again from byte 0 at the next
  // wrote(): for a file truncated to nothing.
  void restart();

 private:
  void run();
  void stop();
  bool stopping();

  const int m_fd;
  const Window m_window;
  uint64_t m_written = 0;   // writer side: the file's end
  uint64_t m_reported = 0;  // writer side: the end last passed to the thread

  std::mutex m_mutex;
  std::condition_variable m_wake;     // the writer -> the thread
  std::condition_variable m_handled;  // the thread -> settle()
  uint64_t m_end = 0;                 // what the file holds, as far as the thread knows
  uint64_t m_done = 0;                // the thread has handled [0, m_done)
  bool m_settle = false;              // handle the last partial step too
  bool m_stop = false;
  bool m_failed = false;  // not a regular file, the file system refused, or no thread could start: no thread
  std::thread m_thread;
};

}  // namespace ett::host
