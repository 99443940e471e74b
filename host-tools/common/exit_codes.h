// exit_codes.h: the exit status of every `ett` verb, in one table: the code returns these, `ett man` prints
// them under EXIT STATUS, docs/guide/ett-command.md's table is checked against them (tests/cli/exit_codes_test.cpp), and a
// test provokes each one.
#pragma once

#include <span>

namespace ett::host {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,          // a usage, input, I/O or database error; `compare`: the gate fired
  kExitKernelFailure = 2,  // `qemu run`: the capture kernel reported a failure
  kExitTimeout = 3,        // `qemu run`: boot, capture or dump took longer than allowed
  kExitQemuFailure = 4,    // `qemu run`: QEMU did not start or ended unexpectedly
  kExitRunCommandFailed = 5,
  kExitFidelityCheck = 6,    // `qemu run --check`, `fidelity --check`
  kExitGateUndecided = 7,    // `compare`: too few actions to decide
  kExitCompareError = 8,     // `compare`: any error, usage errors included
  kExitNotTraceDisk = 10,    // ls, extract, load, fidelity
  kExitUnknownVersion = 11,  // a label or session of a format this ett does not read
  kExitBadCrc = 12,          // a damaged label, session header, stall table or chunk
  kExitTruncated = 13,       // the image ends inside what it describes
  kExitEmptyDisk = 14,       // extract, load: the disk holds no session
  kExitNoSuchSession = 15,   // --session N names none
  kExitSigint = 130,         // 128 + SIGINT: Ctrl-C
  kExitSigterm = 143,        // 128 + SIGTERM
};

struct ExitCodeRow {
  int code;
  const char* verbs;
  const char* meaning;
};

// Every row, in code order.
std::span<const ExitCodeRow> exit_code_table();

}  // namespace ett::host
