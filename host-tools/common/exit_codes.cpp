// exit_codes.cpp: what each exit status means, for the manual page and the check of the guide's table.
#include "common/exit_codes.h"

namespace ett::host {

std::span<const ExitCodeRow> exit_code_table() {
  static constexpr ExitCodeRow kRows[] = {
      {kExitOk, "every verb", "success; `compare`: the candidate is not slower beyond the limit"},
      {kExitUsage, "every verb but compare",
       "a usage error (unknown option, bad value, an output that is an input), a bad input file, an I/O or "
       "database error; `load --all`: a session was skipped"},
      {kExitUsage, "compare", "the gate fired: the candidate is slower beyond the limit"},
      {kExitKernelFailure, "qemu run", "the capture kernel reported a failure"},
      {kExitTimeout, "qemu run", "a timeout in the boot, capture or dump phase"},
      {kExitQemuFailure, "qemu run", "QEMU did not start or exited unexpectedly"},
      {kExitRunCommandFailed, "qemu run", "the --run command failed (the capture is dumped all the same)"},
      {kExitFidelityCheck, "qemu run, fidelity",
       "--check: an event was lost, unexpected or out of order, or the timing error exceeds --tolerance"},
      {kExitGateUndecided, "compare", "the data cannot decide (fewer usable actions than --min-actions)"},
      {kExitCompareError, "compare", "any error, usage errors and mistyped options included"},
      {kExitNotTraceDisk, "ls, extract, load, fidelity, survey", "not a trace disk"},
      {kExitUnknownVersion, "ls, extract, load, fidelity, survey",
       "a trace format (or survey block) version this ett does not read"},
      {kExitBadCrc, "ls, extract, load, fidelity, survey",
       "a bad CRC: label, session header, stall table, chunk or survey block (extract and load take "
       "--salvage)"},
      {kExitTruncated, "ls, extract, load, fidelity, survey",
       "the image ends inside a session, or nothing of a session can be recovered"},
      {kExitEmptyDisk, "extract, load, survey",
       "the trace disk holds no session (`survey`: no survey session; `ls` lists it and exits 0)"},
      {kExitNoSuchSession, "extract, load, fidelity, survey",
       "--session N names no session on the disk (`survey`: no survey session)"},
      {kExitSigint, "every verb", "ended by Ctrl-C (SIGINT), after removing what it was writing"},
      {kExitSigterm, "every verb", "ended by SIGTERM, after removing what it was writing"},
  };
  return kRows;
}

}  // namespace ett::host
