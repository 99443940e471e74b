// direct_writer.cpp: writes a big output file past the page cache, a block at a time on a thread.
#include "common/direct_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "common/write_all.h"

namespace ett::host {

namespace {

// The alignment of the blocks in memory and of every direct write's length: a page, a multiple of any disk's
// logical block this side of exotic devices (whose refusal sends the writes through the page cache).
constexpr size_t kAlign = 4096;

bool set_direct(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

}  // namespace

std::unique_ptr<DirectWriter> DirectWriter::start(int fd, std::string name, size_t misalign) {
  if (!set_direct(fd, true)) return nullptr;
  std::unique_ptr<DirectWriter> writer(new DirectWriter(fd, std::move(name), misalign % kAlign));
  if (writer->m_blocks.empty()) {  // no memory for a block: the file goes through the page cache
    set_direct(fd, false);
    return nullptr;
  }
  return writer;
}

DirectWriter::DirectWriter(int fd, std::string name, size_t misalign) : m_fd(fd), m_name(std::move(name)) {
  m_blocks.reserve(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) {
    // Memory is taken when a block is first filled: a short file touches a page or two of one block.
    void* memory = std::aligned_alloc(kAlign, kBlockBytes + (misalign ? kAlign : 0));
    if (!memory) break;  // fewer blocks: the writer waits for the thread sooner
    m_blocks.push_back(Block{{static_cast<char*>(memory), std::free}, static_cast<char*>(memory) + misalign});
  }
  for (Block& block : m_blocks) m_free.push_back(&block);
}

DirectWriter::~DirectWriter() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_queued.notify_one();
  if (m_thread.joinable()) m_thread.join();
}

void DirectWriter::append(std::string_view text) {
  while (!text.empty()) {
    if (!m_current) {
      std::unique_lock lock(m_mutex);
      m_freed.wait(lock, [this] { return !m_free.empty(); });
      if (!m_status) return;  // nothing more is written
      m_current = m_free.back();
      m_free.pop_back();
      m_current->size = 0;
      m_current->offset = m_offset;
    }
    const size_t size = std::min(text.size(), kBlockBytes - m_current->size);
    std::memcpy(m_current->data + m_current->size, text.data(), size);
    m_current->size += size;
    text.remove_prefix(size);
    if (m_current->size == kBlockBytes) hand_on(false);
  }
}

void DirectWriter::hand_on(bool last) {
  m_offset += m_current->size;
  Block* const block = std::exchange(m_current, nullptr);
  // The first full block starts the thread; a file of one part block is written here, as is every block
  // when no thread could start.
  if (!m_thread.joinable() && !last && !m_no_thread) {
    try {
      m_thread = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      m_no_thread = true;
    }
  }
  if (!m_thread.joinable()) {
    Status status = m_status ? write_block(*block) : Status{};
    std::lock_guard lock(m_mutex);
    if (m_status && !status) m_status = std::move(status);
    m_free.push_back(block);
    return;
  }
  {
    std::lock_guard lock(m_mutex);
    m_queue.push_back(block);
  }
  m_queued.notify_one();
}

void DirectWriter::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_queued.wait(lock, [this] { return m_stop || !m_queue.empty(); });
    if (m_queue.empty()) return;  // stopped, and all written
    Block* const block = m_queue.front();
    m_queue.pop_front();
    m_writing = true;
    const bool failed = !m_status;
    lock.unlock();
    Status status = failed ? Status{} : write_block(*block);
    lock.lock();
    if (m_status && !status) m_status = std::move(status);
    m_writing = false;
    m_free.push_back(block);
    m_freed.notify_all();
  }
}

Status DirectWriter::write_block(const Block& block) {
  const char* data = block.data;
  size_t size = block.size;
  uint64_t offset = block.offset;
  // Whole pages past the page cache, unless the file system refused that before.
  while (!m_cached_only && size >= kAlign) {
    ETT_TRY(set_direct_flag(true));
    const ssize_t n = ::pwrite(m_fd, data, size & ~(kAlign - 1), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL) {
      // The file system refused a direct write: this block and the rest of the file go through the page
      // cache, written behind.
      m_behind = std::make_unique<WriteBehind>(m_fd);
      std::lock_guard lock(m_mutex);
      m_cached_only = true;
      break;
    }
    if (n <= 0) return make_error(ErrorKind::Io, errno_message(m_name, n < 0 ? errno : ENOSPC));
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
    if (static_cast<size_t>(n) % kAlign != 0) break;  // a short write ended mid-page
  }
  if (size == 0) return {};
  // The file's last part page, what a short write left of its block, or a block the file system refused.
  ETT_TRY(set_direct_flag(false));
  return write_cached(data, size, offset);
}

Status DirectWriter::write_cached(const char* data, size_t size, uint64_t offset) {
  ETT_TRY(pwrite_all(m_fd, data, size, offset, m_name));
  if (m_behind) m_behind->wrote(offset + size);
  return {};
}

Status DirectWriter::set_direct_flag(bool on) {
  if (m_direct == on) return {};
  if (!set_direct(m_fd, on)) return make_error(ErrorKind::Io, errno_message(m_name, errno));
  m_direct = on;
  return {};
}

Status DirectWriter::finish() {
  if (m_current && m_current->size > 0) hand_on(true);
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_queued.notify_one();
  if (m_thread.joinable()) m_thread.join();
  m_behind.reset();
  std::lock_guard lock(m_mutex);
  return m_status;
}

void DirectWriter::restart() {
  std::unique_lock lock(m_mutex);
  m_freed.wait(lock, [this] { return m_queue.empty() && !m_writing; });
  if (m_current) {
    m_free.push_back(m_current);
    m_current = nullptr;
  }
  m_offset = 0;
  if (m_behind) m_behind->restart();
}

bool DirectWriter::refused() {
  std::lock_guard lock(m_mutex);
  return m_cached_only;
}

}  // namespace ett::host
