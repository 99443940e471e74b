// output_file.h: writes an export or report to a file (never over an existing one unless forced) or stdout,
// whole or as it is produced (TextOut).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/direct_writer.h"
#include "common/output_target.h"
#include "common/status.h"
#include "common/write_behind.h"

namespace ett::host {

// path "" or "-": standard output.
Status write_output(const std::string& path, const std::string& text, bool force);

// The refusals TextOut::open gives an input of the run, or an existing `path` without `force`, for a command to give before it spends
// seconds on an analysis whose output it could not write. TextOut::open still refuses a file made meanwhile.
Status refuse_existing_output(const std::string& path, bool force);

// Text written in pieces: gathered in a buffer that goes to the file whenever it passes a megabyte, so that a
// 10 M-event export never holds its whole text; or kept whole in memory (the default constructor, for the
// string forms of the exporters). A write error is remembered, later writes are dropped, and finish() says
// what it was. A regular file it opened (not standard output) is written past the page cache (DirectWriter),
// or where its file system cannot do that, written behind (WriteBehind): what lies more than 64 MB behind its
// end leaves the page cache as soon as the disk has it.
class TextOut {
 public:
  TextOut() = default;  // into memory: take() returns the text
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;
  TextOut(TextOut&& other) noexcept;
  ~TextOut();

  // Opens `path` ("" or "-": standard output) as write_output does: an existing file only with `force`, never
  // one of the run's inputs (output_target.h). A regular file is written under a temporary name and renamed
  // into place by finish() when every write succeeded; without finish() (an error, an exception) it is removed.
  static Expected<TextOut> open(const std::string& path, bool force);

  void append(std::string_view text) {
    // A big piece (a chunk of write_independent_lines) goes to the file as it is, after what is buffered.
    if (m_fd >= 0 && (text.size() >= kDirectBytes || m_buffer.size() + text.size() >= kFlushBytes))
      return write_through(text);
    m_buffer.append(text.data(), text.data() + text.size());
  }
  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(m_buffer), format, std::forward<Args>(args)...);
    if (m_buffer.size() >= kFlushBytes) flush();
  }

  void append(const fmt::memory_buffer& text) { append(std::string_view(text.data(), text.size())); }

  // Whether rewind() can take back what was written: a file this TextOut created or truncated, or memory.
  bool can_rewind() const { return m_fd < 0 || m_regular_file; }
  // Drops everything written so far (the file truncated to nothing), for a writer that starts again.
  Status rewind();
  // Writes what is buffered and closes the file: the first error of any write, if one failed.
  Status finish();
  // The file the text goes to now: the temporary file of a regular file until finish() puts it in place.
  const std::string& file_path() const {
    return m_pending.temporary().empty() ? m_name : m_pending.temporary();
  }
  // The text written so far (in-memory TextOut only).
  std::string take();

 private:
  static constexpr size_t kFlushBytes = size_t{1} << 20;
  static constexpr size_t kDirectBytes = size_t{1} << 16;
  TextOut(int fd, std::string name, bool owns) : m_fd(fd), m_name(std::move(name)), m_owns(owns) {}
  void flush();
  void write_through(std::string_view text);  // the buffer, then `text` without copying it
  void write_to_file(std::string_view text);

  fmt::memory_buffer m_buffer;
  int m_fd = -1;  // -1: in memory
  std::string m_name;
  bool m_owns = false;          // a file of ours to close (not standard output)
  bool m_regular_file = false;  // of ours, and a regular file (not a device such as /dev/null)
  Status m_status;
  uint64_t m_file_bytes = 0;                    // written to m_fd so far
  std::unique_ptr<DirectWriter> m_direct;       // a regular file of ours
  std::unique_ptr<WriteBehind> m_write_behind;  // one whose file system has no O_DIRECT
  PendingFile m_pending;                        // a regular file: its temporary name until finish()
};

// Appends the lines of items [begin, end) to a buffer.
using FormatLines = std::function<void(size_t begin, size_t end, fmt::memory_buffer& buffer)>;

// Writes items [0, count) whose lines do not depend on each other (a CSV row, a JSON event) as one loop
// would: `format(begin, end, buffer)` appends the lines of items [begin, end) to `buffer`. The items go in
// chunks of a few thousand, the even chunks formatted on this thread and the odd ones on a second, each into
// one of four buffers; the thread that finishes a chunk writes every finished chunk whose turn has come
// (unless the other is writing), so the text is the same and one thread's write(2) overlaps the other's
// formatting (about half the wall time on two cores, writes included). A thread waits only when four chunks
// are formatted and not yet written: when each thread waited for the other's chunk before writing its own,
// every wait on a loaded machine cost a turn of the scheduler. A chunk is about 1 MB of Perfetto JSON, still
// in cache when write(2) copies it into the page cache: chunks of 65536 items (15 MB) made that copy read
// memory (6-7 s of system time for 3.3 GB). An exception `format` throws stops both threads and is thrown
// here.
void write_independent_lines(size_t count, const FormatLines& format, TextOut& out);

}  // namespace ett::host
