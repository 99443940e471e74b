// status.h: errors as values for the host libraries: ett::Result carrying a kind and one clear message.
#pragma once

#include <string>
#include <utility>

#include "ett/result.h"

namespace ett::host {

// What went wrong, coarsely: the CLI maps kinds to exit codes; tests check them.
enum class ErrorKind {
  Usage,           // bad command-line value or input file contents
  Io,              // the operating system refused (open, read, write, mmap, ...)
  NotTraceDisk,    // no disk label at LBA 0
  UnknownVersion,  // a label of a format version this build does not read
  Truncated,       // the image ends before the data it describes
  EmptyDisk,       // a valid label but no sessions
  NoSuchSession,   // --session N names a session that is not on the disk
  BadCrc,          // a checksum or a structural check of a complete session failed
  KernelFailure,   // the capture kernel reported a failure (or no success)
  Timeout,         // QEMU did not finish in time
  QemuFailure,     // QEMU did not start or exited unexpectedly
  Interrupted,     // SIGINT/SIGTERM while running QEMU
};

struct HostError {
  ErrorKind kind{ErrorKind::Io};
  std::string message;
};

template <typename T>
using Expected = ett::Result<T, HostError>;
using Status = ett::Result<void, HostError>;

inline ett::Failure<HostError> make_error(ErrorKind kind, std::string message) {
  return ett::Failure<HostError>{HostError{kind, std::move(message)}};
}

// "PATH: strerror(errno)"-style message for a failed system call.
std::string errno_message(const std::string& what, int error_number);

}  // namespace ett::host
