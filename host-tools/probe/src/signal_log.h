// signal_log.h: the CSV of what a probe cable wrote when, in the format of `ett qemu run --sent-log`.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace ett::probe {

// index,probe,code,lines,scheduled_ns,sent_ns,host_tsc. Several processes may append to one log. Lines are
// kept in memory and written at close (or every kFlushBytes) in one write() on an O_APPEND descriptor, so
// lines of different processes never interleave and no system call lies between a signal and the program's
// next step (the UDP demo's sendto follows its signal directly). The index counts this
// cable's signals; scheduled_ns = sent_ns = CLOCK_MONOTONIC at the write (`ett qemu run --run` sorts the
// lines by host_tsc, numbers them and makes the times relative to the start of the command).
class SignalLog {
 public:
  static host::Expected<SignalLog> open(const std::string& path);  // creates it with the header when missing
  SignalLog(SignalLog&& other) noexcept;
  SignalLog& operator=(SignalLog&&) = delete;
  SignalLog(const SignalLog&) = delete;
  ~SignalLog();

  host::Status append(int probe, uint8_t code, uint8_t lines, uint64_t monotonic_ns, uint64_t host_tsc);
  host::Status flush();

 private:
  SignalLog(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
  int m_fd;
  std::string m_path;
  uint64_t m_index = 0;
  std::string m_buffer;
};

inline constexpr size_t kFlushBytes = 16384;

inline constexpr const char* kSignalLogHeader = "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc\n";

}  // namespace ett::probe
