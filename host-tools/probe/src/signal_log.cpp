// signal_log.cpp: appends one CSV line per signal with a single write().
#include "signal_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace ett::probe {

namespace {

host::Status write_all(int fd, const char* text, size_t size, const std::string& path) {
  const ssize_t wrote = ::write(fd, text, size);
  if (wrote != static_cast<ssize_t>(size))
    return host::make_error(host::ErrorKind::Io,
                            path + ": write failed: " + (wrote < 0 ? std::strerror(errno) : "short write"));
  return {};
}

}  // namespace

host::Expected<SignalLog> SignalLog::open(const std::string& path) {
  // O_EXCL decides which of several processes starting together writes the header.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    return host::make_error(host::ErrorKind::Io, "signal log " + path + ": " + std::strerror(errno));
  SignalLog log(fd, path);
  if (created) {
    auto wrote = write_all(fd, kSignalLogHeader, std::strlen(kSignalLogHeader), path);
    if (!wrote) return wrote.failure();
  }
  return log;
}

SignalLog::SignalLog(SignalLog&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)),
      m_path(std::move(other.m_path)),
      m_index(other.m_index),
      m_buffer(std::move(other.m_buffer)) {}

SignalLog::~SignalLog() {
  if (m_fd < 0) return;
  (void)flush();  // ett_probe_close flushes first and reports; this is the last chance
  ::close(m_fd);
}

host::Status SignalLog::flush() {
  if (m_buffer.empty()) return {};
  auto wrote = write_all(m_fd, m_buffer.data(), m_buffer.size(), m_path);
  m_buffer.clear();
  return wrote;
}

host::Status SignalLog::append(int probe, uint8_t code, uint8_t lines, uint64_t monotonic_ns,
                               uint64_t host_tsc) {
  char line[160];
  const int size = std::snprintf(
      line, sizeof(line), "%llu,%d,%u,%u,%llu,%llu,%llu\n", static_cast<unsigned long long>(m_index), probe,
      code, lines, static_cast<unsigned long long>(monotonic_ns),
      static_cast<unsigned long long>(monotonic_ns), static_cast<unsigned long long>(host_tsc));
  ++m_index;
  m_buffer.append(line, static_cast<size_t>(size));
  if (m_buffer.size() >= kFlushBytes) return flush();
  return {};
}

}  // namespace ett::probe
