// qemu_process.h: one QEMU child started with fork/exec (no shell), its serial console and stderr collected.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace ett::host {

struct QemuExit {
  bool exited = false;  // exited normally with `status`; otherwise killed by `signal`
  int status = 0;
  int signal = 0;
  std::string describe() const;  // "exit status 33", "killed by signal 9"
};

class QemuProcess {
 public:
  // `echo`: copy the serial console to this stream as it arrives (nullptr: keep it quiet).
  // `avoid_cpu`: keep QEMU (all its threads) off this CPU.
  static Expected<std::unique_ptr<QemuProcess>> start(const std::vector<std::string>& argv, std::FILE* echo,
                                                      std::optional<int> avoid_cpu = std::nullopt);
  ~QemuProcess();  // kills QEMU if it still runs
  QemuProcess(const QemuProcess&) = delete;
  QemuProcess& operator=(const QemuProcess&) = delete;

  pid_t pid() const { return m_pid; }
  // Non-blocking: the exit once QEMU has exited (then the output readers are finished too).
  std::optional<QemuExit> poll();
  // SIGKILL, then reap.
  QemuExit kill_and_wait();

  std::string serial() const;
  std::string errors() const;

 private:
  QemuProcess() = default;
  void read_output();
  void finish(int wait_status);

  pid_t m_pid = -1;
  std::optional<QemuExit> m_exit;
  UniqueFd m_stdout;
  UniqueFd m_stderr;
  std::FILE* m_echo = nullptr;
  std::thread m_reader;
  mutable std::mutex m_mutex;
  std::string m_serial;
  std::string m_errors;
};

// The first line of `text` that starts with `prefix` ("" when none), without its line end.
std::string find_line_starting(const std::string& text, std::string_view prefix);
// The last non-empty line of `text`.
std::string last_line(const std::string& text);

}  // namespace ett::host
