// output_file.cpp: writes an export or report to a file or stdout.
#include "export/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/write_all.h"

namespace ett::host {

namespace {

ett::Failure<HostError> already_exists(const std::string& path) {
  return make_error(ErrorKind::Usage, path + ": already exists; use --force to overwrite it");
}

// Standard output, or a device, pipe or terminal written in place (an existing one only when forced).
Expected<int> open_in_place(const std::string& path, bool force) {
  if (path.empty() || path == "-") return STDOUT_FILENO;
  if (!force) return already_exists(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorKind::Io, errno_message(path, errno));
  return fd;
}

std::string target_name(const std::string& path) {
  return path.empty() || path == "-" ? "standard output" : path;
}

// The chunks write_independent_lines has formatted and not yet written, at most.
constexpr size_t kChunkSlots = 4;

// The chunk buffers of write_independent_lines, kept from one call to the next: a streamed export calls it
// once per block of events, each time on a new second thread, and buffers made afresh (about 1 MB of Perfetto
// JSON each) were memory first touched anew at every call, 4 KB page faults.
class ChunkBuffers {
 public:
  fmt::memory_buffer take() {
    std::lock_guard lock(m_mutex);
    if (m_free.empty()) return fmt::memory_buffer();
    fmt::memory_buffer buffer = std::move(m_free.back());
    m_free.pop_back();
    return buffer;
  }
  void give_back(fmt::memory_buffer&& buffer) {
    std::lock_guard lock(m_mutex);
    if (m_free.size() < kKept && buffer.capacity() <= kLargestKept) m_free.push_back(std::move(buffer));
  }

 private:
  static constexpr size_t kKept = kChunkSlots;
  static constexpr size_t kLargestKept = size_t{16} << 20;
  std::mutex m_mutex;
  std::vector<fmt::memory_buffer> m_free;
};

ChunkBuffers& chunk_buffers() {
  static ChunkBuffers& buffers = *new ChunkBuffers;  // never destroyed: no thread meets it gone at exit
  return buffers;
}

}  // namespace

Status refuse_existing_output(const std::string& path, bool force) {
  ETT_TRY(refuse_output_on_input(path));
  struct stat status {};
  if (force || path.empty() || path == "-" || ::lstat(path.c_str(), &status) != 0) return {};
  return already_exists(path);
}

Status write_output(const std::string& path, const std::string& text, bool force) {
  ETT_TRY_ASSIGN(TextOut out, TextOut::open(path, force));
  out.append(text);
  return out.finish();
}

TextOut::TextOut(TextOut&& other) noexcept
    : m_buffer(std::move(other.m_buffer)),
      m_fd(other.m_fd),
      m_name(std::move(other.m_name)),
      m_owns(other.m_owns),
      m_regular_file(other.m_regular_file),
      m_status(std::move(other.m_status)),
      m_file_bytes(other.m_file_bytes),
      m_direct(std::move(other.m_direct)),
      m_write_behind(std::move(other.m_write_behind)),
      m_pending(std::move(other.m_pending)) {
  other.m_fd = -1;
  other.m_owns = false;
}

TextOut::~TextOut() {
  m_direct.reset();  // their threads use the descriptor
  m_write_behind.reset();
  if (m_owns) ::close(m_fd);
}

Expected<TextOut> TextOut::open(const std::string& path, bool force) {
  // Whatever stdio already buffered for standard output goes first.
  if (std::fflush(stdout) != 0) return make_error(ErrorKind::Io, errno_message("standard output", errno));
  ETT_TRY(refuse_output_on_input(path));
  if (written_in_place(path)) {
    ETT_TRY_ASSIGN(int fd, open_in_place(path, force));
    return TextOut(fd, target_name(path), fd != STDOUT_FILENO);
  }
  ETT_TRY_ASSIGN(PendingFile pending, PendingFile::create(path, force));
  TextOut out(pending.release_fd(), target_name(path), true);
  out.m_pending = std::move(pending);
  out.m_regular_file = true;
  out.m_direct = DirectWriter::start(out.m_fd, out.m_name);
  if (!out.m_direct) out.m_write_behind = std::make_unique<WriteBehind>(out.m_fd);
  return out;
}

Status TextOut::rewind() {
  m_buffer.clear();
  if (m_fd < 0) return {};
  if (!m_regular_file) return make_error(ErrorKind::Io, m_name + ": cannot take back what was written to it");
  if (m_direct) m_direct->restart();
  if (m_write_behind) m_write_behind->restart();
  m_file_bytes = 0;
  if (::ftruncate(m_fd, 0) != 0 || ::lseek(m_fd, 0, SEEK_SET) != 0)
    return make_error(ErrorKind::Io, errno_message(m_name, errno));
  return {};
}

void TextOut::flush() {
  if (m_fd < 0) return;  // in memory: the buffer is the text
  write_to_file(std::string_view(m_buffer.data(), m_buffer.size()));
  m_buffer.clear();
}

void TextOut::write_through(std::string_view text) {
  flush();
  write_to_file(text);
}

void TextOut::write_to_file(std::string_view text) {
  if (!m_status || text.empty()) return;
  if (m_direct) return m_direct->append(text);
  m_status = write_all(m_fd, text.data(), text.size(), m_name);
  m_file_bytes += text.size();
  if (m_write_behind) m_write_behind->wrote(m_file_bytes);
}

Status TextOut::finish() {
  flush();
  if (m_direct) {
    Status written = m_direct->finish();
    if (m_status && !written) m_status = std::move(written);
    m_direct.reset();
  }
  m_write_behind.reset();  // what the disk has not taken yet stays in the page cache
  if (m_owns) {
    const int fd = m_fd;
    m_owns = false;
    if (::close(fd) != 0 && m_status) m_status = make_error(ErrorKind::Io, errno_message(m_name, errno));
  }
  if (!m_status) {
    m_pending.discard();
    return m_status;
  }
  if (!m_pending.temporary().empty()) m_status = m_pending.commit();
  return m_status;
}

std::string TextOut::take() {
  std::string text(m_buffer.data(), m_buffer.size());
  m_buffer.clear();
  return text;
}

void write_independent_lines(size_t count, const FormatLines& format, TextOut& out) {
  constexpr size_t kChunk = size_t{1} << 12;
  const size_t chunks = (count + kChunk - 1) / kChunk;
  // Chunk c is formatted into slot c % kChunkSlots once the chunk kChunkSlots before it is written.
  std::array<fmt::memory_buffer, kChunkSlots> slots;
  for (fmt::memory_buffer& slot : slots) slot = chunk_buffers().take();  // kept from call to call
  struct GiveBack {
    std::array<fmt::memory_buffer, kChunkSlots>& slots;
    ~GiveBack() {
      for (fmt::memory_buffer& slot : slots) chunk_buffers().give_back(std::move(slot));
    }
  } give_back{slots};
  std::array<bool, kChunkSlots> ready{};  // formatted, not yet written
  std::mutex mutex;
  std::condition_variable written_more;
  size_t written = 0;          // chunks [0, written) are in `out`
  bool writing = false;        // a thread is writing the chunks that are ready, in order
  bool stopped = false;        // a format threw
  std::exception_ptr failure;  // of the first format that threw
  // Chunks first, first + 2, ...: each formatted, then marked ready; the thread that marks one ready writes,
  // unless the other is writing, every chunk that is ready in turn.
  auto run = [&](size_t first) {
    try {
      for (size_t chunk = first; chunk < chunks; chunk += 2) {
        {
          std::unique_lock lock(mutex);
          written_more.wait(lock, [&] { return stopped || chunk < written + kChunkSlots; });
          if (stopped) return;
        }
        fmt::memory_buffer& buffer = slots[chunk % kChunkSlots];
        buffer.clear();
        format(chunk * kChunk, std::min(count, (chunk + 1) * kChunk), buffer);
        std::unique_lock lock(mutex);
        if (stopped) return;
        ready[chunk % kChunkSlots] = true;
        if (writing) continue;
        writing = true;
        while (!stopped && written < chunks && ready[written % kChunkSlots]) {
          const size_t slot = written % kChunkSlots;
          lock.unlock();
          out.append(slots[slot]);
          lock.lock();
          ready[slot] = false;
          ++written;
          written_more.notify_all();
        }
        writing = false;
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!stopped) failure = std::current_exception();
      stopped = true;
      written_more.notify_all();
    }
  };
  if (chunks <= 1) {
    run(0);
  } else {
    std::thread other(run, 1);
    run(0);
    other.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ett::host
