// output_target.cpp: the inputs of a run, the refusal of an output that would land on one of them, and output
// files written under a temporary name and renamed into place when complete.
#include "common/output_target.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace ett::host {

namespace {

struct Input {
  std::string path;   // as the user spelled it
  std::string role;   // "the trace disk"
  std::string where;  // its directory resolved + "/" + its name: matches a file that does not exist yet
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
};

std::mutex g_inputs_mutex;
std::vector<Input>& inputs() {
  static std::vector<Input>& list = *new std::vector<Input>;
  return list;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The directory resolved (symlinks, "..", "./") and the last name as given; the path itself when its
// directory cannot be resolved.
std::string resolved_place(const std::string& path) {
  char resolved[PATH_MAX];
  if (!::realpath(directory_of(path).c_str(), resolved)) return path;
  std::string place = resolved;
  if (place != "/") place += '/';
  return place + name_of(path);
}

// Temporary files of live PendingFiles, for remove_pending_files() (a signal handler: fixed storage only).
constexpr int kPendingSlots = 16;
char g_pending_paths[kPendingSlots][PATH_MAX];
std::atomic<bool> g_pending_used[kPendingSlots];

int claim_slot(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int slot = 0; slot < kPendingSlots; ++slot) {
    bool expected = false;
    if (!g_pending_used[slot].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_pending_paths[slot], path.c_str(), path.size() + 1);
    return slot;
  }
  return -1;
}

void free_slot(int slot) {
  if (slot >= 0) g_pending_used[slot].store(false);
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

ett::Failure<HostError> already_exists(const std::string& path) {
  return make_error(ErrorKind::Usage, path + ": already exists; use --force to overwrite it");
}

}  // namespace

void note_input(const std::string& path, const std::string& role) {
  if (path.empty() || path == "-") return;
  Input input{path, role, resolved_place(path)};
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    input.exists = true;
    input.device = status.st_dev;
    input.inode = status.st_ino;
  }
  std::lock_guard lock(g_inputs_mutex);
  inputs().push_back(std::move(input));
}

void note_database_input(const std::string& path) {
  note_input(path, "the database");
  for (const char* suffix : {"-wal", "-shm", "-journal"}) note_input(path + suffix, "a file of the database");
}

void clear_inputs() {
  std::lock_guard lock(g_inputs_mutex);
  inputs().clear();
}

Status refuse_output_on_input(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return {};
  struct stat status {};
  const bool exists = ::stat(path.c_str(), &status) == 0;
  // Writing to a character device or a pipe destroys nothing (/dev/null as a scenario and as the output).
  if (exists && (S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode) || S_ISSOCK(status.st_mode))) return {};
  const std::string place = resolved_place(path);
  std::lock_guard lock(g_inputs_mutex);
  for (const Input& input : inputs()) {
    const bool same_file =
        exists && input.exists && input.device == status.st_dev && input.inode == status.st_ino;
    if (!same_file && input.where != place) continue;
    const std::string spelled = input.path == path ? "" : " (" + input.path + ")";
    return make_error(ErrorKind::Usage, option + " " + path + " is " + input.role + " of this run" + spelled +
                                            ": an output never replaces an input, even with --force; "
                                            "write it to another file");
  }
  return {};
}

bool written_in_place(const std::string& path) {
  if (path.empty() || path == "-") return true;
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode);
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : m_target(std::move(other.m_target)),
      m_temporary(std::move(other.m_temporary)),
      m_fd(other.m_fd),
      m_force(other.m_force),
      m_slot(other.m_slot) {
  other.m_temporary.clear();
  other.m_fd = -1;
  other.m_slot = -1;
}

PendingFile& PendingFile::operator=(PendingFile&& other) noexcept {
  if (this == &other) return *this;
  discard();
  m_target = std::move(other.m_target);
  m_temporary = std::move(other.m_temporary);
  m_fd = other.m_fd;
  m_force = other.m_force;
  m_slot = other.m_slot;
  other.m_temporary.clear();
  other.m_fd = -1;
  other.m_slot = -1;
  return *this;
}

PendingFile::~PendingFile() {
  discard();
}

Expected<PendingFile> PendingFile::create(const std::string& target, bool force) {
  ETT_TRY(refuse_output_on_input(target));
  struct stat status {};
  if (!force && ::lstat(target.c_str(), &status) == 0) return already_exists(target);
  // ".NAME.ett-XXXXXX" beside NAME: hidden, and renamed within one directory (one file system).
  const std::string name = name_of(target);
  const std::string directory = directory_of(target);
  std::string temporary = (directory == "." && target.find('/') == std::string::npos ? "" : directory + "/") +
                          "." + (name.size() > 200 ? std::string() : name) + ".ett-XXXXXX";
  std::vector<char> buffer(temporary.begin(), temporary.end());
  buffer.push_back('\0');
  // SIGINT and SIGTERM wait until the file is in the table remove_pending_files() reads: a signal between its
  // creation and its entry would leave it behind.
  sigset_t signals, before;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, &before);
  const int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  const int error = errno;
  PendingFile file;
  if (fd >= 0) {
    file.m_target = target;
    file.m_temporary = buffer.data();
    file.m_fd = fd;
    file.m_force = force;
    file.m_slot = claim_slot(file.m_temporary);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (fd < 0) return make_error(ErrorKind::Io, errno_message(target, error));
  if (::fchmod(fd, new_file_mode()) != 0) return make_error(ErrorKind::Io, errno_message(target, errno));
  return file;
}

int PendingFile::release_fd() {
  const int fd = m_fd;
  m_fd = -1;
  return fd;
}

Status PendingFile::commit() {
  if (m_temporary.empty()) return make_error(ErrorKind::Io, m_target + ": nothing to put in place");
  if (m_fd >= 0) {
    const int fd = release_fd();
    if (::close(fd) != 0) {
      const int error = errno;
      discard();
      return make_error(ErrorKind::Io, errno_message(m_target, error));
    }
  }
  // The refusal once more: the target may have become a link to an input since create().
  if (auto refused = refuse_output_on_input(m_target); !refused) {
    discard();
    return refused;
  }
  int renamed = 0;
  if (m_force) {
    renamed = ::rename(m_temporary.c_str(), m_target.c_str());
  } else {
    // Never over a file that appeared meanwhile: a hard link fails on an existing name.
    renamed = ::link(m_temporary.c_str(), m_target.c_str());
    if (renamed != 0 && errno == EEXIST) {
      discard();
      return already_exists(m_target);
    }
    if (renamed != 0 && (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP))
      renamed = ::rename(m_temporary.c_str(), m_target.c_str());  // a file system without hard links
  }
  if (renamed != 0) {
    const int error = errno;
    discard();
    return make_error(ErrorKind::Io, errno_message(m_target, error));
  }
  ::unlink(m_temporary.c_str());  // after link(); after rename() the name is gone already (ENOENT)
  free_slot(m_slot);
  m_slot = -1;
  m_temporary.clear();
  return {};
}

void PendingFile::discard() {
  if (m_fd >= 0) ::close(release_fd());
  if (!m_temporary.empty()) ::unlink(m_temporary.c_str());
  m_temporary.clear();
  free_slot(m_slot);
  m_slot = -1;
}

void remove_pending_files() {
  for (int slot = 0; slot < kPendingSlots; ++slot)
    if (g_pending_used[slot].load()) ::unlink(g_pending_paths[slot]);
}

}  // namespace ett::host
