// live_command.h: the command of `ett qemu run --run CMD`: a /bin/sh child in its own process group with the
// probe cable in its environment, and the signal log its libettprobe writes, read back as a sent log.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/injector.h"

namespace ett::host {

class LiveCommand {
 public:
  // Runs `/bin/sh -c command` with `environment` ("NAME=value") added, pinned to `cpu` when given.
  static Expected<LiveCommand> start(const std::string& command, const std::vector<std::string>& environment,
                                     std::optional<int> cpu);
  LiveCommand(LiveCommand&& other) noexcept;
  LiveCommand& operator=(LiveCommand&&) = delete;
  LiveCommand(const LiveCommand&) = delete;
  ~LiveCommand();  // terminates the command's process group if it still runs

  // Non-blocking: the wait status once the shell has exited.
  std::optional<int> poll();
  // SIGTERM to the whole process group, SIGKILL after a grace period, then reap the shell.
  void terminate();
  uint64_t start_ns() const { return m_start_ns; }

 private:
  LiveCommand(pid_t pid, uint64_t start_ns) : m_pid(pid), m_start_ns(start_ns) {}
  pid_t m_pid;
  uint64_t m_start_ns;
  std::optional<int> m_status;
};

// A temporary file removed when it goes out of scope: the signal log libettprobe appends to.
class TemporaryFile {
 public:
  static Expected<TemporaryFile> create();  // an empty file in the temporary directory
  TemporaryFile(TemporaryFile&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }
  TemporaryFile& operator=(TemporaryFile&&) = delete;
  ~TemporaryFile();
  const std::string& path() const { return m_path; }

 private:
  explicit TemporaryFile(std::string path) : m_path(std::move(path)) {}
  std::string m_path;
};

// "exit status 3", "killed by signal 15"; empty for exit status 0.
std::string command_failure(int wait_status);

// Reads the CSV that libettprobe appended to (index,probe,code,lines,scheduled_ns,sent_ns,host_tsc, each
// process numbering its own lines, times CLOCK_MONOTONIC): orders the signals by host TSC, numbers them from
// 0 and makes the times relative to `start_ns`, as the sent log of a scenario.
Expected<std::vector<SentEvent>> read_signal_log(const std::string& path, uint64_t start_ns);

}  // namespace ett::host
