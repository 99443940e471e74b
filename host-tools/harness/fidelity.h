// fidelity.h: what a capture under QEMU kept of what the injector sent: matching, losses, order, latency.
//
// Under TCG the guest's TSC is the host's TSC minus a constant C (QEMU adds a fixed offset to the host's
// rdtsc while the VM runs), and the injector reads the host TSC right before and right after each store. So
// every captured stamp g has a host time g + C, and an event's detection latency is g + C - host_tsc_before
// of its write (the TSC before the store: the one after it can be late by a preemption of the injector).
//
// C is estimated from the run itself: C = max over matched events of (host_tsc_before - g), i.e. the fastest
// detection of the run is taken as latency 0. Why this and not a ping-pong before the capture: the capture
// loop polls every ~30 TSC ticks (about 13 ns at 2.25 GHz), so over a run of a few hundred events at random
// phases against the loop, the fastest one is seen within about one poll of its write. The cost: every
// latency is too small by the true minimum latency of the run (one poll plus the time between the host's
// store and its rdtsc: tens of ns), and a run whose every event was delayed by a stall would hide that common
// delay. A ping-pong would bound C from both sides but needs a kernel-side echo loop before the capture.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/injector.h"
#include "image/trace_image.h"

namespace ett::host {

struct FidelityReport {
  size_t sent = 0;           // events the injector wrote while the kernel was capturing
  size_t captured = 0;       // events in the session
  size_t matched = 0;        // captured events paired with a sent one
  size_t lost = 0;           // sent, never captured (merged into a later change within one poll, or A->B->A)
  size_t unexpected = 0;     // captured, but no change was sent there (duplicates included)
  size_t out_of_order = 0;   // captured after an event whose write came later
  size_t merged = 0;         // informational: events of different writes that got the same stamp
  size_t after_end = 0;      // sent after the kernel's capture had ended (not counted as sent)
  int64_t offset_ticks = 0;  // C: host TSC = guest TSC + C
  uint64_t tsc_hz = 0;       // converts ticks to ns
  // Detection latency (stamp + C - host_tsc_before) of the matched events, ns.
  double latency_p50_ns = 0;
  double latency_p99_ns = 0;
  double latency_max_ns = 0;
  std::vector<double> latencies_ns;  // per matched event, in capture order
  bool guest_clock = false;          // the run played on the guest's clock (latency: stamp - published clock)

  // The timeline against the scenario's, over the matched events in capture order. Interval error: |captured
  // interval - scheduled interval| of consecutive events. Schedule error: |(stamp - scheduled time) - its
  // median|, how far an event sits from where the scenario put it relative to the rest.
  double interval_p50_ns = 0, interval_p95_ns = 0, interval_max_ns = 0;
  double schedule_p50_ns = 0, schedule_p95_ns = 0, schedule_max_ns = 0;
  // Writes the pacing held back past their time (the injector's numbers; see PlayResult).
  size_t held_back = 0;
  double held_back_max_ns = 0;  // NaN: not known (a sent log from before its held_ns column)

  bool clean() const { return lost == 0 && unexpected == 0 && out_of_order == 0; }
  // Both timing errors within `tolerance_ns`.
  bool on_time(double tolerance_ns) const {
    return interval_max_ns <= tolerance_ns && schedule_max_ns <= tolerance_ns;
  }
};

struct CaptureWindow {
  uint64_t tsc_hz = 0;
  uint64_t end_tsc = 0;  // guest TSC when the capture ended (0: unknown, nothing is excluded)
  // Bounds on C (low, high). High: the host's TSC when it saw the kernel in state Capturing minus the
  // capture's start TSC the kernel had published before that state; low: the same from the host's previous
  // look, when the state was not yet Capturing, less a margin. The runner knows them; without them the offset
  // is estimated from a pairing by codes alone, which is right only when nothing was lost.
  std::optional<std::pair<int64_t, int64_t>> offset_bounds;
  // The run played on the guest's clock (-icount): each send's guest_tsc_before is already in the stamps'
  // time base, so the offset is 0 and needs no estimate.
  bool guest_clock = false;
};

// Pairs `captured` (in session order) with `sent` (in send order). A captured event on probe p with code c is
// the write on p that was current when it was stamped: the latest send on p with host_tsc_before <= stamp +
// C, and it must carry code c. Sends after the capture's end (stamp end_tsc + C) count as after_end, not as
// lost. C starts at the offset most events agree with inside the bounds (or the code-only estimate) and is
// lowered to the fastest detection of the pairs until it settles. The accounting is exact whatever C is: sent
// = matched + lost, captured = matched + unexpected; C decides which send an ambiguous capture (a code
// repeated within the bound's slack, about a millisecond) is paired with, so only the latencies of such
// events can be off.
FidelityReport assess_fidelity(std::span<const SentEvent> sent, std::span<const Event> captured,
                               CaptureWindow window);

// Several lines of text ("  fidelity: ..."), and a JSON object (one line; null where nothing was measured).
std::string format_fidelity(const FidelityReport& report);
nlohmann::ordered_json fidelity_document(const FidelityReport& report);
std::string fidelity_json(const FidelityReport& report);

// Where `ett analyze align` should put a capture of machine k against machine 1's (the reference):
// t_1 = offset_ns + (1 + drift_ppm / 1e6) * t_k in the captures' own ns. Guest clock: from the origins (a
// write due at scenario time s is due at origin_k + s on every machine). Host clock: from the guest/host TSC
// offsets the fidelity pairing found (TCG: guest TSC = host TSC - C).
struct CaptureClock {
  uint64_t tsc_hz = 0;
  uint64_t capture_start_tsc = 0;
  uint64_t origin_tsc = 0;   // guest clock: the guest's TSC at the scenario's time 0
  int64_t offset_ticks = 0;  // host clock: FidelityReport::offset_ticks
};
struct AlignmentTruth {
  double offset_ns = 0;
  double drift_ppm = 0;
};
AlignmentTruth alignment_truth(const CaptureClock& reference, const CaptureClock& machine, bool guest_clock);

// One machine's part of a run's fidelity report, as `ett qemu run` and `ett fidelity` print it.
struct MachineFidelity {
  std::string disk;
  uint32_t session = 0;
  size_t events_sent = 0;
  uint64_t kernel_events = 0;
  std::optional<FidelityReport> report;  // none: no capture to compare (dump=serial, a calibrate session)
  std::optional<AlignmentTruth> truth;   // machines 2..N
};
// The text block of every machine (with a "machine K:" line each when there are several).
std::string format_machines(const std::vector<MachineFidelity>& machines);
// One object per machine with a report: fidelity_document plus truth_offset_ns and truth_drift_ppm for
// machines 2..N (the array --fidelity-json writes).
nlohmann::ordered_json machines_document(const std::vector<MachineFidelity>& machines);

// --check's default --tolerance: see docs/guide/qemu.md ("Timing under load").
inline constexpr double kDefaultToleranceUs = 5000;

}  // namespace ett::host
