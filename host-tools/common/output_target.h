// output_target.h: where a verb's output file goes: never onto one of the run's inputs, and into place only
// once it is complete.
//
// Every verb notes its input files (a trace disk, a database file, a scenario, a log) with note_input()
// before it opens an output; refuse_output_on_input() then refuses an output that names one of them however
// it is spelled (relative, ./, a symlink, a hard link: the same device and inode; or, for a file that does
// not exist yet such as a database's -wal, the same directory and name). --force never lifts that refusal.
//
// A regular output file is written as a temporary file beside it (".NAME.ett-XXXXXX", same directory, so the
// rename stays on one file system) and renamed over NAME only when it is complete (PendingFile::commit). A
// failed or interrupted run removes its temporary file and leaves NAME as it was: an earlier file stays
// whole, no 0-byte file blocks the rerun. Devices, pipes and terminals are written directly.
#pragma once

#include <string>

#include "common/status.h"

namespace ett::host {

// `role` names the input in the refusal ("the trace disk", "the database"). A path that cannot be resolved is
// still remembered by name.
void note_input(const std::string& path, const std::string& role);
// A sqlite: database file, with the -wal, -shm and -journal files SQLite keeps beside it.
void note_database_input(const std::string& path);
// Forgets every input noted (tests that run several verbs in one process).
void clear_inputs();
// Usage error "-o PATH is ROLE INPUT; ...": `option` names the option in the message ("-o", "--sent-log").
Status refuse_output_on_input(const std::string& path, const std::string& option = "-o");

// An output file under construction. create() makes the temporary file (after refuse_output_on_input and,
// without `force`, the refusal of an existing NAME); commit() renames it into place (over an existing NAME
// only with `force`); the destructor removes it unless committed. While it exists, SIGINT and SIGTERM remove
// it too (remove_pending_files, from the signal handling of the CLI).
class PendingFile {
 public:
  PendingFile() = default;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&& other) noexcept;
  ~PendingFile();

  static Expected<PendingFile> create(const std::string& target, bool force);

  int fd() const { return m_fd; }
  // Takes the descriptor: the caller closes it (before commit()).
  int release_fd();
  const std::string& target() const { return m_target; }
  const std::string& temporary() const { return m_temporary; }
  // Closes the descriptor if still held, then renames the temporary file over the target.
  Status commit();
  // Removes the temporary file now.
  void discard();

 private:
  std::string m_target;
  std::string m_temporary;
  int m_fd = -1;
  bool m_force = false;
  int m_slot = -1;  // in the table remove_pending_files() reads
};

// Whether `path` is standard output ("" or "-") or names something that is not a regular file (a device, a
// pipe, a terminal): written in place, not through a PendingFile.
bool written_in_place(const std::string& path);

// Removes every temporary file of a PendingFile still alive. Async-signal-safe (unlink only): the signal
// handling calls it before the process ends.
void remove_pending_files();

}  // namespace ett::host
