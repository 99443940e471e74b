// pg_server.cpp: initdb, pg_ctl start/stop on a temporary directory, as an unprivileged user when root.
#include "support/pg_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace ett::host {

Expected<ThrowawayPostgres> ThrowawayPostgres::start() {
  ThrowawayPostgres server;
  const char* bin = std::getenv("ETT_PG_BIN");
  server.m_bin = bin && *bin ? bin : "/usr/lib/postgresql/15/bin";
  if (::access((server.m_bin + "/initdb").c_str(), X_OK) != 0)
    return make_error(ErrorKind::Usage, server.m_bin +
                                            "/initdb not found: install Debian's postgresql-15 "
                                            "(scripts/deps.sh) or set ETT_PG_BIN");
  std::string pattern = "/tmp/ett-pg-XXXXXX";  // short: a unix socket path must fit in 107 bytes
  if (!::mkdtemp(pattern.data())) return make_error(ErrorKind::Io, errno_message("mkdtemp", errno));
  server.m_dir = pattern;
  if (::geteuid() == 0) {
    const passwd* nobody = ::getpwnam("nobody");
    if (!nobody)
      return make_error(ErrorKind::Io, "running as root and there is no user 'nobody' to run PostgreSQL as");
    server.m_uid = static_cast<int>(nobody->pw_uid);
    server.m_gid = static_cast<int>(nobody->pw_gid);
    if (::chown(server.m_dir.c_str(), nobody->pw_uid, nobody->pw_gid) != 0)
      return make_error(ErrorKind::Io, errno_message(server.m_dir, errno));
  }
  const std::string data = server.m_dir + "/data";
  ETT_TRY(server.run({server.m_bin + "/initdb", "-D", data, "-A", "trust", "-U", "ett", "-E", "UTF8",
                      "--locale=C", "--no-sync", "--no-instructions"},
                     "initdb"));
  ETT_TRY(server.run(
      {server.m_bin + "/pg_ctl", "-D", data, "-l", server.m_dir + "/server.log", "-w", "-t", "60", "-o",
       "-k " + server.m_dir +
           " -c listen_addresses='' -F -c max_wal_size=8GB "
           "-c checkpoint_timeout=1h -c shared_buffers=256MB",
       "start"},
      "pg_ctl start"));
  server.m_running = true;
  server.m_uri = "postgresql:///postgres?host=" + server.m_dir + "&user=ett";
  return Expected<ThrowawayPostgres>(std::move(server));
}

ThrowawayPostgres::ThrowawayPostgres(ThrowawayPostgres&& other) noexcept
    : m_dir(std::move(other.m_dir)),
      m_bin(std::move(other.m_bin)),
      m_uri(std::move(other.m_uri)),
      m_uid(other.m_uid),
      m_gid(other.m_gid),
      m_running(other.m_running) {
  other.m_dir.clear();
  other.m_running = false;
}

ThrowawayPostgres::~ThrowawayPostgres() {
  stop();
  if (!m_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(m_dir, ignored);
  }
}

void ThrowawayPostgres::stop() {
  if (!m_running) return;
  m_running = false;
  (void)run({m_bin + "/pg_ctl", "-D", m_dir + "/data", "-m", "immediate", "-w", "stop"}, "pg_ctl stop");
}

Status ThrowawayPostgres::run(const std::vector<std::string>& args, const std::string& what) const {
  std::vector<std::string> full;
  if (m_uid >= 0)
    full = {"/usr/bin/setpriv", fmt::format("--reuid={}", m_uid), fmt::format("--regid={}", m_gid),
            "--clear-groups", "--"};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : full) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string log = m_dir + "/" + what.substr(0, what.find(' ')) + ".out";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, m_dir.c_str());  // the server user may not see our cwd
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return make_error(ErrorKind::Io, errno_message(what + ": " + argv[0], spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();
  return make_error(ErrorKind::Io, fmt::format("{} failed: {}", what, output.str()));
}

}  // namespace ett::host
