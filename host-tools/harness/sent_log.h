// sent_log.h: reading back what `ett qemu run --sent-log` wrote (the CSV and its .run.json beside it), so
// that `ett fidelity` recomputes the fidelity report of a run after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "harness/injector.h"

namespace ett::host {

// What the fidelity pairing needs of a run beyond its sent events and its session: written by `ett qemu run`
// next to each sent log (one per machine), as one JSON object.
//   {"format":"ett-sent-run","version":1,"machine":1,"machines":1,"disk":"trace.img","session":3,
//    "guest_clock":true,"offset_low_ticks":-123,"offset_high_ticks":456,"origin_tsc":789}
// Unknown values are null (a run that failed before the kernel captured has no session and no bounds).
struct SentRun {
  unsigned machine = 1;  // 1-based
  unsigned machines = 1;
  std::string disk;
  std::optional<uint32_t> session;
  bool guest_clock = false;
  std::optional<std::pair<int64_t, int64_t>> offset_bounds;  // CaptureWindow::offset_bounds
  uint64_t origin_tsc = 0;                                   // guest clock: the guest TSC at scenario time 0
};

// sent.csv -> sent.run.json (the sent log's name with .run.json for its extension).
std::string sent_run_path(const std::string& sent_log);

Status write_sent_run(const SentRun& run, const std::string& path);
// Errors: Io (cannot read it), Usage (not such a file: wrong JSON, a missing or mistyped key).
Expected<SentRun> read_sent_run(const std::string& path);

// The CSV of write_sent_log, columns found by name (any order, extra columns ignored). Required: probe, code,
// scheduled_ns, host_tsc_before, guest_tsc_due, guest_tsc_before, held_back; the others are read when
// present. A log from before the held_ns column: every held_ns is 0 and `held_ns_known` is false.
struct SentLog {
  std::vector<SentEvent> events;
  bool held_ns_known = true;
};
// Errors: Io (cannot read it), Usage (no header, a required column missing, a value that is not a number).
Expected<SentLog> read_sent_log(const std::string& path);

}  // namespace ett::host
