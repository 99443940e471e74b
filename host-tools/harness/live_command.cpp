// live_command.cpp: fork/exec of the --run command, its process group, and the signal log read back.
#include "harness/live_command.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/text_input.h"

namespace ett::host {

namespace {

constexpr uint64_t kTerminateGraceNs = 2'000'000'000;

void nap_ms(long ms) {
  timespec pause{0, ms * 1'000'000};
  nanosleep(&pause, nullptr);
}

}  // namespace

Expected<LiveCommand> LiveCommand::start(const std::string& command,
                                         const std::vector<std::string>& environment,
                                         std::optional<int> cpu) {
  // Everything the child needs is prepared before fork (the runner has threads: after fork, only
  // async-signal-safe calls): the environment is ours plus `environment`, whose names take precedence.
  std::vector<std::string> variables = environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view name(*entry, std::strcspn(*entry, "="));
    const bool replaced = std::any_of(environment.begin(), environment.end(), [&](const std::string& mine) {
      return mine.size() > name.size() && mine.compare(0, name.size(), name) == 0 && mine[name.size()] == '=';
    });
    if (!replaced) variables.emplace_back(*entry);
  }
  std::vector<char*> envp;
  for (std::string& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);
  const uint64_t start = monotonic_ns();
  const pid_t pid = fork();
  if (pid < 0) return make_error(ErrorKind::Io, errno_message("--run: fork", errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: the runner can stop the command and everything it started
    if (cpu) {
      cpu_set_t only;
      CPU_ZERO(&only);
      CPU_SET(*cpu, &only);
      sched_setaffinity(0, sizeof(only), &only);
    }
    const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
    execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so that the group exists before the runner might signal it
  return LiveCommand(pid, start);
}

LiveCommand::LiveCommand(LiveCommand&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_start_ns(other.m_start_ns), m_status(other.m_status) {}

LiveCommand::~LiveCommand() {
  if (m_pid > 0 && !m_status) terminate();
}

std::optional<int> LiveCommand::poll() {
  if (m_status || m_pid <= 0) return m_status;
  int status = 0;
  if (waitpid(m_pid, &status, WNOHANG) == m_pid) m_status = status;
  return m_status;
}

void LiveCommand::terminate() {
  if (m_pid <= 0 || poll()) return;
  kill(-m_pid, SIGTERM);
  const uint64_t until = monotonic_ns() + kTerminateGraceNs;
  while (!poll() && monotonic_ns() < until) nap_ms(5);
  if (!m_status) {
    kill(-m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_status = status;
  }
}

Expected<TemporaryFile> TemporaryFile::create() {
  std::string path = (std::filesystem::temp_directory_path() / "ett-signals-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return make_error(ErrorKind::Io, errno_message("--run: a temporary signal log", errno));
  ::close(fd);
  return TemporaryFile(path);
}

TemporaryFile::~TemporaryFile() {
  if (!m_path.empty()) ::unlink(m_path.c_str());
}

std::string command_failure(int wait_status) {
  if (WIFEXITED(wait_status))
    return WEXITSTATUS(wait_status) == 0 ? "" : fmt::format("exit status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return fmt::format("killed by signal {}", WTERMSIG(wait_status));
  return "ended abnormally";
}

Expected<std::vector<SentEvent>> read_signal_log(const std::string& path, uint64_t start_ns) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorKind::Io, errno_message("signal log " + path, errno));
  std::vector<SentEvent> sent;
  LineReader reader(in, "signal log " + path);
  std::string line;
  while (reader.next(line)) {
    const size_t number = reader.number();
    if (line.empty() || line.starts_with("index,")) continue;  // each process that created it wrote a header
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream fields(line);
    SentEvent event;
    unsigned probe = 0, code = 0, lines = 0;
    uint64_t scheduled = 0, monotonic = 0;
    if (!(fields >> event.index >> probe >> code >> lines >> scheduled >> monotonic >> event.host_tsc))
      return make_error(ErrorKind::Io, fmt::format("signal log {} line {}: not index,probe,code,lines,"
                                                   "scheduled_ns,sent_ns,host_tsc",
                                                   path, number));
    event.probe = static_cast<uint8_t>(probe);
    event.code = static_cast<uint8_t>(code);
    event.lines = static_cast<uint8_t>(lines);
    event.sent_ns = monotonic - std::min(monotonic, start_ns);
    event.scheduled_ns = event.sent_ns;  // a live command has no schedule
    // libettprobe logs the TSC after its store only: the fidelity pairing's "before" reading is that one.
    event.host_tsc_before = event.host_tsc;
    sent.push_back(event);
  }
  ETT_TRY(reader.status());
  std::stable_sort(sent.begin(), sent.end(),
                   [](const SentEvent& a, const SentEvent& b) { return a.host_tsc < b.host_tsc; });
  for (size_t i = 0; i < sent.size(); ++i) sent[i].index = i;
  return sent;
}

}  // namespace ett::host
