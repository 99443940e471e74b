// qemu_process.cpp: fork/exec of QEMU with pipes, a reader thread for its output, and reaping.
#include "harness/qemu_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ett::host {

std::string QemuExit::describe() const {
  if (exited) return fmt::format("exit status {}", status);
  return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
}

Expected<std::unique_ptr<QemuProcess>> QemuProcess::start(const std::vector<std::string>& argv,
                                                          std::FILE* echo, std::optional<int> avoid_cpu) {
  if (argv.empty()) return make_error(ErrorKind::Usage, "no QEMU command");
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(ErrorKind::Io, errno_message("pipe", errno));
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return make_error(ErrorKind::Io, errno_message("pipe", errno));
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) return make_error(ErrorKind::Io, errno_message("pipe", errno));
  UniqueFd exec_read(exec_pipe[0]), exec_write(exec_pipe[1]);
  UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_in.valid()) return make_error(ErrorKind::Io, errno_message("/dev/null", errno));

  cpu_set_t cpus;
  bool set_cpus = false;
  if (avoid_cpu && ::sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    CPU_CLR(*avoid_cpu, &cpus);
    set_cpus = CPU_COUNT(&cpus) > 0;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(ErrorKind::QemuFailure, errno_message("cannot start QEMU: fork", errno));
  if (pid == 0) {
    // Child. Own process group: a terminal's Ctrl-C reaches ett, which stops QEMU itself. QEMU dies with ett.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (set_cpus) ::sched_setaffinity(0, sizeof(cpus), &cpus);
    // QEMU inherits nothing but its three standard streams (exec_write closes at exec like the rest).
    ::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
    ::dup2(null_in.get(), 0);
    ::dup2(out_write.get(), 1);
    ::dup2(err_write.get(), 2);
    ::execvp(args[0], args.data());
    int error = errno;
    ssize_t ignored = ::write(exec_write.get(), &error, sizeof(error));
    (void)ignored;
    ::_exit(127);
  }
  out_write.reset();
  err_write.reset();
  exec_write.reset();

  // The exec pipe closes on a successful exec; an errno arrives through it when exec failed.
  int exec_error = 0;
  ssize_t got;
  do {
    got = ::read(exec_read.get(), &exec_error, sizeof(exec_error));
  } while (got < 0 && errno == EINTR);
  if (got == sizeof(exec_error)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return make_error(
        ErrorKind::QemuFailure,
        fmt::format("QEMU failed to start: cannot run {}: {}{}", argv[0], std::strerror(exec_error),
                    exec_error == ENOENT ? " (install qemu-system-x86)" : ""));
  }

  std::unique_ptr<QemuProcess> process(new QemuProcess());
  process->m_pid = pid;
  process->m_stdout = std::move(out_read);
  process->m_stderr = std::move(err_read);
  process->m_echo = echo;
  process->m_reader = std::thread([raw = process.get()] { raw->read_output(); });
  // The reader stays off the injector's CPU too, where a spinning real-time thread would starve it.
  if (set_cpus) pthread_setaffinity_np(process->m_reader.native_handle(), sizeof(cpus), &cpus);
  return Expected<std::unique_ptr<QemuProcess>>(std::move(process));
}

QemuProcess::~QemuProcess() {
  if (!m_exit) kill_and_wait();
  if (m_reader.joinable()) m_reader.join();
}

void QemuProcess::read_output() {
  pollfd fds[2] = {{m_stdout.get(), POLLIN, 0}, {m_stderr.get(), POLLIN, 0}};
  int open_count = 2;
  char buffer[4096];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t got = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      {
        std::lock_guard lock(m_mutex);
        (i == 0 ? m_serial : m_errors).append(buffer, static_cast<size_t>(got));
      }
      if (i == 0 && m_echo) {
        std::fwrite(buffer, 1, static_cast<size_t>(got), m_echo);
        std::fflush(m_echo);
      }
    }
  }
}

void QemuProcess::finish(int wait_status) {
  QemuExit exit;
  if (WIFEXITED(wait_status)) {
    exit.exited = true;
    exit.status = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    exit.signal = WTERMSIG(wait_status);
  }
  m_exit = exit;
  // QEMU has exited, so its pipes reach end of file and the reader ends.
  if (m_reader.joinable()) m_reader.join();
}

std::optional<QemuExit> QemuProcess::poll() {
  if (m_exit) return m_exit;
  int status = 0;
  pid_t done = ::waitpid(m_pid, &status, WNOHANG);
  if (done == m_pid) finish(status);
  return m_exit;
}

QemuExit QemuProcess::kill_and_wait() {
  if (m_exit) return *m_exit;
  ::kill(m_pid, SIGKILL);
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(m_pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  finish(status);
  return *m_exit;
}

std::string QemuProcess::serial() const {
  std::lock_guard lock(m_mutex);
  return m_serial;
}

std::string QemuProcess::errors() const {
  std::lock_guard lock(m_mutex);
  return m_errors;
}

std::string find_line_starting(const std::string& text, std::string_view prefix) {
  size_t position = 0;
  while (position < text.size()) {
    size_t end = text.find('\n', position);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + position, end - position);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
    while (!line.empty() && line.front() == '\r') line.remove_prefix(1);
    if (line.starts_with(prefix)) return std::string(line);
    position = end + 1;
  }
  return "";
}

std::string last_line(const std::string& text) {
  size_t end = text.size();
  while (end > 0) {
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(start, end - start);
    while (!line.empty() && line.front() == '\r') line.erase(0, 1);
    if (!line.empty()) return line;
    end = start;
  }
  return "";
}

}  // namespace ett::host
