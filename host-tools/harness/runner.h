// runner.h: `ett qemu run`: boot the kernel under QEMU (TCG), play a scenario, stop, check the dump.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "harness/fidelity.h"
#include "harness/qemu_disks.h"

namespace ett::host {

// The PC's firmware: SeaBIOS (QEMU's own), or OVMF (UEFI, Debian's ovmf package), which boots only the ISO.
enum class Firmware { Bios, Uefi };

struct RunOptions {
  std::string disk;  // created as a 64 MiB trace disk when missing
  std::string scenario;
  std::string kernel;  // multiboot ELF for -kernel; or
  std::string iso;     // a GRUB ISO for -cdrom (its menu picks the QEMU entry)
  std::string append;  // kernel arguments after "exit=qemu" (-kernel only)
  bool append_given = false;
  uint8_t initial_lines = 0;
  double timeout_s = 120;      // the whole run
  double boot_timeout_s = 30;  // until the kernel reports Capturing
  std::string sent_log;        // CSV of what was written when ("" = none)
  std::string serial_log;      // the guest's serial output ("" = none)
  bool verbose = false;        // copy the serial output to stdout as it arrives
  std::string qemu = "qemu-system-i386";
  bool free_run = false;  // do not pace writes on the kernel's heartbeat (see play_scenario)
  // A scenario plays on the guest's clock: QEMU runs with -icount (the guest's TSC counts instructions and
  // stands still while the host deschedules the vCPU) and each write waits for the guest's clock
  // (play_on_guest_clocks). false: plain TCG, writes on the host's clock. --run always uses the host's.
  bool guest_clock = true;
  // Live mode (instead of a scenario): run this through /bin/sh once the kernel captures, with
  // ETT_PROBE_URL=shm:<the probe file>?layout=L in its environment; stop the capture when it exits.
  std::string run_command;
  unsigned memory_mb = 256;                           // each QEMU's -m
  std::string machine = "pc";                         // QEMU's -M: "pc" or "q35"
  DiskInterface disk_interface = DiskInterface::Ide;  // where the trace disk is attached (qemu_disks.h)
  Firmware firmware = Firmware::Bios;
  // Several measurement PCs: each its own QEMU, probe and disk (machine_disk_path); the scenario goes to
  // machine 1, and the same edges on `sync_probe` (toggling its lowest line every sync_period_us, from 0 to
  // the scenario's end) go to every machine, for `ett analyze align --sync P`.
  unsigned machines = 1;
  uint8_t sync_probe = 0;  // 0: no sync edges
  double sync_period_us = 1000;
  // A GPS receiver's PPS output on data line D`pps_line` (-1: none) of every machine: high for 100 ms from
  // each whole second of UTC, the rising edge moved by a seeded normal deviate of `pps_jitter_ns` (the
  // receiver's jitter; machine K draws from seed pps_seed + K - 1). The pulses cover the scenario and one
  // second past its end (at least three). UTC is defined in RunReport::utc_anchor_ns.
  int pps_line = -1;
  double pps_jitter_ns = 0;
  uint64_t pps_seed = 1;
};

struct MachineResult {
  std::string disk;
  size_t events_sent = 0;  // into this machine's probe (the scenario for machine 1, sync edges for all)
  uint64_t kernel_events = 0;
  uint32_t session_number = 0;
  uint32_t stop_reason = 0;
  uint64_t tsc_hz = 0;
  std::optional<FidelityReport> fidelity;  // a capture dumped to its disk: what it kept of what was sent
  uint64_t capture_start_tsc = 0;
  uint64_t origin_tsc = 0;  // guest clock: this guest's TSC at the scenario's time 0
  // Machines 2..N: the truth `ett analyze align` should find for this capture against machine 1's,
  // t_1 = offset + (1 + drift_ppm / 1e6) * t_k in the captures' own ns. Guest clock: from the origins (a
  // write due at scenario time s is due at origin_k + s on every machine). Host clock: from the guest/host
  // TSC offsets the fidelity pairing found (TCG: guest TSC = host TSC - C).
  std::optional<double> truth_offset_ns;
  std::optional<double> truth_drift_ppm;
  // Guest clock: this guest's TSC at the instant RunReport::utc_anchor_ns defines (its UTC is
  // utc_anchor_ns + (TSC - utc_anchor_tsc) * 1e9 / tsc_hz).
  uint64_t utc_anchor_tsc = 0;
  size_t pps_pulses = 0;  // rising edges sent to this machine
};

struct RunReport {
  bool disk_created = false;
  size_t events_sent = 0;
  size_t scenario_events = 0;
  bool kernel_stopped_early = false;  // the kernel left Capturing before the scenario ended
  uint64_t kernel_events = 0;         // Control.event_count
  uint32_t session_number = 0;
  uint32_t stop_reason = 0;
  uint64_t tsc_hz = 0;
  uint64_t boot_ns = 0;      // QEMU start to Capturing
  uint64_t playback_ns = 0;  // scenario start to the last write, host time (CLOCK_MONOTONIC)
  // Guest clock: the same span on the guest's clock, machine 1's TSC from the scenario's time 0 to its last
  // write, at the kernel's calibrated rate (guest_span_ns).
  std::optional<uint64_t> guest_playback_ns;
  uint64_t total_ns = 0;     // QEMU start to exit
  uint64_t max_late_ns = 0;  // worst sent_ns - scheduled_ns
  uint64_t median_late_ns = 0;
  bool realtime = false;                // the injector ran under SCHED_FIFO
  bool guest_clock = false;             // the scenario played on the guest's clock (QEMU -icount)
  double guest_rate = 0;                // guest clock: guest ticks per host ns while the vCPU ran (machine 1)
  uint64_t held_back_max_ns = 0;        // the longest hold of a paced write
  bool paced = false;                   // writes waited for the kernel's heartbeat
  size_t paced_writes = 0;              // writes held back past their time (an emulator stall, or a burst)
  std::vector<MachineResult> machines;  // one per machine, machine 1 first (its numbers are also above)
  // The truth in UTC (a scenario run; 0 in live mode), in ns since 1970: every sent event's utc_ns in the
  // sent log comes from it. Host clock: the host's CLOCK_REALTIME, read next to CLOCK_MONOTONIC before
  // playback, a write's UTC is utc_anchor_ns plus the CLOCK_MONOTONIC time since that read. Guest clock: the
  // guest's UTC is defined as the linear map utc_anchor_ns + (TSC - utc_anchor_tsc) * 1e9 / tsc_hz of its TSC
  // (the kernel's calibrated rate), anchored at the host's CLOCK_REALTIME read right after the guest's clock
  // utc_anchor_tsc was read from the probe; a write's UTC is that of the guest TSC it was due at (or of the
  // clock published before the store, when that is later).
  int64_t utc_anchor_ns = 0;
  int pps_line = -1;

  // --run (live mode)
  bool live = false;                // --run: events_sent counts the command's signals
  std::string command_failure;      // --run: "exit status 3" when the command failed ("" = exit 0)
  bool command_terminated = false;  // --run: the kernel stopped first and the command was ended
};

// A guest-clock playback's span on the guest's clock, in ns at the kernel's calibrated `tsc_hz`: from the
// guest's TSC at the scenario's time 0 (`origin_tsc`) to its last write (the later of the TSC it was due at
// and the clock the kernel had published before it). Nothing when nothing was written on the guest's clock or
// the rate is unknown; 0 when the last write's TSC is before the origin.
std::optional<uint64_t> guest_span_ns(const std::vector<SentEvent>& sent, uint64_t origin_tsc,
                                      uint64_t tsc_hz);

// Errors: Usage (bad options or input), KernelFailure, Timeout, QemuFailure, Interrupted, Io.
// `progress` gets one-line notes (disk created, kernel stopped early); may be nullptr.
Expected<RunReport> run_qemu(const RunOptions& options, std::FILE* progress);

// The file of machine `machine` (1-based) of `machines`: PATH itself for one machine, else "-K" before the
// extension (trace.img -> trace-1.img, trace-2.img; sent.csv -> sent-1.csv).
std::string machine_disk_path(const std::string& path, unsigned machine, unsigned machines);

// dirname(/proc/self/exe) + "/ett-kernel.elf": the kernel built next to the `ett` binary, or, installed,
// PREFIX/lib/ett/ett-kernel.elf for PREFIX/bin/ett.
std::string default_kernel_path();

}  // namespace ett::host
