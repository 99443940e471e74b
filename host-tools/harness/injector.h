// injector.h: plays a scenario into the virtual probe's line byte on schedule, recording each write's time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/scenario.h"

namespace ett::host {

struct SentEvent {
  size_t index = 0;  // in Scenario::events
  uint8_t probe = 0;
  uint8_t code = 0;
  uint8_t lines = 0;
  uint64_t scheduled_ns = 0;  // the scenario's time
  uint64_t sent_ns = 0;       // CLOCK_MONOTONIC after the store, relative to the scenario start
  uint64_t host_tsc = 0;      // __rdtsc() right after the store
  // __rdtsc() right before the store: the store happened between the two. The injector can be preempted
  // between its store and the rdtsc after it (it steps down from SCHED_FIFO now and then), so only this one
  // is a safe "not visible before" time.
  uint64_t host_tsc_before = 0;
  // Guest clock playback only (0 otherwise), in guest TSC ticks: when the write was due on the guest's clock,
  // and the clock the kernel had published before the store (the guest cannot have seen the write earlier).
  uint64_t guest_tsc_due = 0;
  uint64_t guest_tsc_before = 0;
  bool held_back = false;  // pacing made this write wait past its time ...
  uint64_t held_ns = 0;    // ... by this much (ns on the playback's clock)
  // The truth in UTC, filled in by the runner (runner.h, RunReport::utc_anchor_ns): the write's true UTC in
  // ns since 1970 (0: unknown), and for a PPS edge which one (+1 rising, -1 falling) and the UTC second it
  // marks.
  int64_t utc_ns = 0;
  int pps_edge = 0;
  int64_t pps_second = 0;
};

struct PlayResult {
  std::vector<SentEvent> sent;  // events of the writes done, in scenario order
  size_t writes_done = 0;
  bool stopped_early = false;  // keep_going() said no
  uint64_t start_monotonic_ns = 0;
  uint64_t duration_ns = 0;         // scenario start to the last write
  bool realtime = false;            // the playback ran under SCHED_FIFO
  size_t paced_writes = 0;          // writes held back past their time until the kernel had polled
  uint64_t held_back_max_ns = 0;    // the longest of those holds (on the playback's clock)
  uint64_t held_back_total_ns = 0;  // all of them together
  bool guest_clock = false;         // play_on_guest_clocks
  // play_on_guest_clocks: per target, the guest TSC at the scenario's time 0 (scenario time t is due at
  // origin + t * tsc_hz / 1e9), and the fastest rate its clock was seen to run at (guest ticks per host ns).
  std::vector<uint64_t> origin_tsc;
  std::vector<double> guest_rate;
  // play_scenarios only: what went to each target, in target order (`sent` is then empty).
  std::vector<std::vector<SentEvent>> sent_per_target;
};

// The wait at the kernel's hold, made free in guest time: a named pipe kept full, behind the isa-debugcon
// QEMU gets on the guest's clock (qemu_command.h). The kernel writes one byte to the debugcon at each turn of
// its wait; QEMU passes it to the pipe with "write all", so the vCPU sleeps (retrying every 100 us) while the
// pipe is full, and under -icount the guest's clock stands still meanwhile. Without it the wait spins, and
// the guest's clock runs on at about the host's speed. release() lets one waiting write through.
class HoldPipe {
 public:
  static Expected<HoldPipe> create(const std::string& path);  // made (replacing a stale one) and filled
  HoldPipe(HoldPipe&& other) noexcept;
  HoldPipe& operator=(HoldPipe&&) = delete;
  ~HoldPipe();    // closed and removed
  void unlink();  // the name only (QEMU has opened it): nothing is left behind if this process is killed
  // Empties the pipe and fills it again but one byte: the write the guest waits in (if any) goes through,
  // and its next one blocks again.
  void release() const;

 private:
  HoldPipe(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  std::string m_path;
  int m_fd = -1;
};

// One probe to play into: several measurement PCs each get their own (`ett qemu run --machines N`).
struct PlayTarget {
  const Scenario* scenario = nullptr;
  uint8_t* lines = nullptr;
  const uint32_t* heartbeat = nullptr;  // pacing for this target's writes (see play_scenario); nullptr: free
  // The guest's clock for play_on_guest_clocks: the kernel's Control.clock_256 and heartbeat (0: nothing
  // published yet), its capture_start_tsc (to unwrap the 32 bits) and tsc_hz (scenario ns -> guest ticks).
  const uint32_t* clock_256 = nullptr;
  const uint32_t* clock_heartbeat = nullptr;
  uint64_t start_tsc = 0;
  uint64_t tsc_hz = 0;
  // play_on_guest_clocks: the guest TSC at the scenario's time 0 (0: the clock published when playback
  // starts). The runner sets it a little ahead, so that it knows the UTC of time 0 before the first write.
  uint64_t origin_tsc = 0;
  // play_on_guest_clocks: the kernel's Control.hold_256 (nullptr: none). The injector keeps it at the due
  // time of the target's next write, so that a guest whose injector was held up waits for the write at its
  // next stop check instead of running past it; 0 when no write is due (pacing, the end of the playback).
  uint32_t* hold_256 = nullptr;
  const HoldPipe* hold_pipe = nullptr;  // released whenever the hold moves on from a time the guest reached
};

// Busy-waits the last ~200 us before each write (sleeps before that) and stores each write's byte with one
// release store. `keep_going` is asked now and then (never in the last 20 us before a write); false stops.
// With `cpu`, the calling thread runs pinned to that CPU under SCHED_FIFO for the playback (when the system
// allows it): on a busy host a normal thread is preempted for milliseconds, and the writes it owed then go
// out back to back. The caller must keep QEMU off that CPU, or the spinning injector starves its vCPU.
//
// With `heartbeat` (the kernel's Control.heartbeat), each write also waits until the kernel has polled since
// the previous one (vprobe::kPaceBeats): a stall of the emulated CPU then makes the next event late (and the
// lateness is recorded) instead of merging two changes into one poll. Without it the writes run free on the
// scenario's clock, which is what a loss test wants.
PlayResult play_scenario(const Scenario& scenario, uint8_t* lines, const std::function<bool()>& keep_going,
                         std::optional<int> cpu = std::nullopt, const uint32_t* heartbeat = nullptr);

// Plays several scenarios on one clock, each into its own probe: the writes of all targets are merged by
// time; writes due at the same time go out back to back in target order (each target's store followed by its
// own rdtsc). Pacing is per target, but writes due together wait until every one of their kernels has polled,
// so a sync edge still reaches all machines together (measured: median 0.15 us apart, max 18 us, docs/guide/several-pcs.md).
// `start_monotonic_ns`: the scenario's time 0 on CLOCK_MONOTONIC (0: now); a later one waits for it.
PlayResult play_scenarios(const std::vector<PlayTarget>& targets, const std::function<bool()>& keep_going,
                          std::optional<int> cpu = std::nullopt, uint64_t start_monotonic_ns = 0);

// Plays each target on its own guest's clock instead of the host's: under QEMU's -icount the guest's TSC
// counts executed instructions, so it stands still while the host deschedules the vCPU, and a write due at
// scenario time t goes out when that guest's clock reaches origin + t (origin: its clock when the playback
// starts). The clock is the one the kernel publishes at every stop check (Control.clock_256), extrapolated
// between two publications at the rate seen, never more than one publication interval ahead. The injector
// spins (a late wake-up is a late write: the guest runs on), sleeping only when the next write is far away
// and as much as the real-time throttling budget needs (see injector.cpp). Pacing as in play_scenario.
// With PlayTarget::hold_256 the guest cannot run on past a late write: its kernel waits at the first stop
// check at or after the write's due time until the write is made.
PlayResult play_on_guest_clocks(const std::vector<PlayTarget>& targets,
                                const std::function<bool()>& keep_going,
                                std::optional<int> cpu = std::nullopt);

// The guest TSC the target's kernel has published last (Control.clock_256, unwrapped from start_tsc).
uint64_t published_guest_clock(const PlayTarget& target);

// A CPU for the injector alone: the highest-numbered one this process may use, when it may use at least two.
std::optional<int> choose_injector_cpu();

// CSV: index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,guest_tsc_before,
// held_back,utc_ns,pps_edge,pps_second,held_ns (utc_ns empty when unknown; pps_edge rise|fall or empty;
// held_ns: how long pacing held the write back, SentEvent::held_ns). Read back by read_sent_log (sent_log.h).
Status write_sent_log(const std::vector<SentEvent>& sent, const std::string& path);

uint64_t monotonic_ns();
// The ns from `from` to `to` on one clock; 0 when `to` is before `from` (a playback stopped before its time
// 0, which may lie ahead: an unsigned `to - from` would be 2^64 less a little, 18446744073709.6 ms).
constexpr uint64_t elapsed_ns(uint64_t from, uint64_t to) {
  return to > from ? to - from : 0;
}
// CLOCK_REALTIME in ns since 1970.
int64_t realtime_ns();

}  // namespace ett::host
