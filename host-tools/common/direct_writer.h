// direct_writer.h: a big output file written past the page cache (O_DIRECT): its text gathered into aligned
// blocks that a thread of its own hands to the disk while the writer goes on.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/write_behind.h"

namespace ett::host {

// For a regular file of ours, new or emptied, written front to back (TextOut's files). The text is copied
// into blocks of kBlockBytes, aligned in memory and in the file; each full block goes to a thread that writes
// it with pwrite(2) on the descriptor switched to O_DIRECT, from the block straight to the disk, while the
// writer fills the next; the writer waits only when all kBlocks blocks are on their way. Through the page
// cache, the kernel's part of a 3.3 GB export (the copy into new page-cache pages, their buffer heads, the
// write-back, and dropping them again behind the writer, WriteBehind) took 1.1-1.5 s of system time; this way
// it takes 0.2-0.4 s, and the disk's own speed is the bound (docs/benchmarks.md, "End to end"). The file's last part
// page goes through the page cache (O_DIRECT cleared: a direct write's length is a multiple of the disk's
// block), the whole pages before it past it. A file system that refuses O_DIRECT when the descriptor is
// switched gets no DirectWriter (start() says so); one that refuses a direct write (EINVAL) gets that block
// and the rest through the page cache, written behind (WriteBehind). The file's contents do not depend on any
// of it. finish() returns once the disk has taken the full blocks: on a disk slower than the formatting, the
// writer goes at the disk's pace, where through the page cache it would have left the rest for the kernel to
// write.
class DirectWriter {
 public:
  // nullptr when `fd` cannot be switched to O_DIRECT (its file system does not do it); `name` is for
  // messages.
  static std::unique_ptr<DirectWriter> start(int fd, std::string name) {
    return start(fd, std::move(name), 0);
  }
  // For tests: blocks that begin `misalign` bytes past a page in memory, whose direct writes every file
  // system refuses (EINVAL), as one whose blocks are bigger than a page refuses the writer's.
  static std::unique_ptr<DirectWriter> start(int fd, std::string name, size_t misalign);
  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;
  ~DirectWriter();

  // Appends `text` at the file's end (after an error, drops it: finish() says what the error was).
  void append(std::string_view text);
  // Writes what is gathered and waits for the thread: the first error of any write, if one failed.
  Status finish();
  // Waits for the writes on their way, drops what is gathered and starts again at byte 0: for a file about to
  // be truncated to nothing.
  void restart();
  // Whether the file system refused a direct write (the rest of the file then went through the page cache).
  bool refused();

  static constexpr size_t kBlockBytes = size_t{4} << 20;
  static constexpr size_t kBlocks = 4;

 private:
  struct Block {
    std::unique_ptr<char, void (*)(void*)> memory;
    char* data = nullptr;  // in memory: the first byte of text
    size_t size = 0;       // bytes of text in it
    uint64_t offset = 0;   // where it goes in the file
  };

  DirectWriter(int fd, std::string name, size_t misalign);
  void hand_on(bool last);  // the current block to the thread (`last`: finish's part block)
  void run();
  Status write_block(const Block& block);  // on the thread
  Status write_cached(const char* data, size_t size, uint64_t offset);
  Status set_direct_flag(bool on);  // O_DIRECT on the descriptor, or not

  const int m_fd;
  const std::string m_name;
  std::vector<Block> m_blocks;
  // Writer side.
  Block* m_current = nullptr;  // being filled; nullptr: none yet
  uint64_t m_offset = 0;       // where the next block goes

  std::mutex m_mutex;
  std::condition_variable m_queued;  // the writer -> the thread
  std::condition_variable m_freed;   // the thread -> the writer
  std::deque<Block*> m_queue;        // full blocks (and a last part one) in file order
  std::vector<Block*> m_free;
  bool m_writing = false;  // the thread is writing a block it took off the queue
  bool m_stop = false;
  Status m_status;  // the first error
  // Writer side: the thread, started with the first full block.
  std::thread m_thread;
  bool m_no_thread = false;  // none could start: the writer writes each block itself
  // The writing side: the thread, or the writer where there is none.
  bool m_direct = true;        // the descriptor has O_DIRECT (cleared for what goes through the page cache)
  bool m_cached_only = false;  // the file system refused a direct write: no more are tried (set under the
                               // mutex, for refused())
  std::unique_ptr<WriteBehind> m_behind;  // then: what goes through the page cache leaves it behind
};

}  // namespace ett::host
