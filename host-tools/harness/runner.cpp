// runner.cpp: one `ett qemu run`: disk, shared memory, QEMU, boot handshake, playback, stop, verdict.
#include "harness/runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "common/interrupt.h"
#include "common/probe_layout.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"
#include "harness/fidelity.h"
#include "harness/injector.h"
#include "harness/live_command.h"
#include "harness/qemu_command.h"
#include "harness/qemu_process.h"
#include "harness/scenario.h"
#include "harness/sent_log.h"
#include "harness/shared_memory.h"
#include "image/disk_maker.h"
#include "image/trace_image.h"

namespace ett::host {

namespace {

using vprobe::Control;
using vprobe::KernelState;

constexpr uint64_t kPollNs = 1'000'000;
constexpr uint64_t kSettleNs = 20'000'000;       // after the last write, before Stop: let the kernel see it
constexpr uint64_t kOffsetMarginNs = 2'000'000;  // see Machine::offset_bounds
constexpr uint64_t kFailedExitGraceNs = 10'000'000'000;  // a Failed kernel should leave QEMU by itself
// Sync edges added to a scenario, at most: about as many events as a scenario file may hold.
constexpr uint64_t kMaxAddedEdges = 10'000'000;

std::atomic<bool> g_interrupted{false};

extern "C" void on_terminate_signal(int signal) {
  note_interrupt(signal);
  g_interrupted.store(true);
}

// SIGINT/SIGTERM set a flag for the duration of a run, so that QEMU is stopped and the files are cleaned up.
class SignalGuard {
 public:
  SignalGuard() {
    g_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = on_terminate_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &m_old_int);
    sigaction(SIGTERM, &action, &m_old_term);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &m_old_int, nullptr);
    sigaction(SIGTERM, &m_old_term, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

uint32_t load(uint32_t& field) {
  return std::atomic_ref<uint32_t>(field).load(std::memory_order_acquire);
}
uint64_t load(uint64_t& field) {
  return std::atomic_ref<uint64_t>(field).load(std::memory_order_acquire);
}

KernelState state_of(Control* control) {
  return static_cast<KernelState>(load(control->state));
}
bool kernel_found_probe(Control* control) {
  return load(control->magic) == vprobe::kControlMagic;
}

const char* state_name(KernelState state) {
  switch (state) {
    case KernelState::Booting:
      return "booting";
    case KernelState::Capturing:
      return "capturing";
    case KernelState::Stopped:
      return "stopped";
    case KernelState::Dumping:
      return "dumping";
    case KernelState::Done:
      return "done";
    case KernelState::Failed:
      return "failed";
  }
  return "unknown";
}

void sleep_ns(uint64_t ns) {
  timespec duration{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&duration, nullptr);
}

std::string quote_block(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  constexpr size_t kMax = 2000;
  if (text.size() > kMax) text = "..." + text.substr(text.size() - kMax);
  return text;
}

std::string seconds(uint64_t ns) {
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

std::string serial_hint(const QemuProcess& qemu) {
  std::string line = last_line(qemu.serial());
  return line.empty() ? "the kernel printed nothing on serial" : "last serial line: \"" + line + "\"";
}

// Why QEMU ended without success, as one message. `phase` says what the run was waiting for.
HostError failure_after_exit(const QemuExit& exit, const QemuProcess& qemu, const char* phase) {
  const std::string serial = qemu.serial();
  if (std::string panic = find_line_starting(serial, "ETT: PANIC"); !panic.empty())
    return HostError{ErrorKind::KernelFailure, "the kernel panicked: \"" + panic + "\""};
  if (std::string failed = find_line_starting(serial, "ETT: RESULT FAILED"); !failed.empty())
    return HostError{ErrorKind::KernelFailure, "the kernel reported a failure: \"" + failed + "\""};
  if (exit.exited && exit.status == vprobe::qemu_status_for(vprobe::kExitFailure))
    return HostError{
        ErrorKind::KernelFailure,
        fmt::format("the kernel exited with its failure status (QEMU {}) without a RESULT line; {}",
                    exit.describe(), serial_hint(qemu))};
  if (exit.exited && exit.status == vprobe::qemu_status_for(vprobe::kExitSuccess))
    return HostError{ErrorKind::KernelFailure,
                     fmt::format("QEMU exited with the kernel's success status while {}, but the serial log "
                                 "has no \"ETT: RESULT OK\" line or the kernel is not Done; {}",
                                 phase, serial_hint(qemu))};
  const std::string errors = quote_block(qemu.errors());
  return HostError{ErrorKind::QemuFailure,
                   fmt::format("QEMU exited unexpectedly ({}) while {}{}", exit.describe(), phase,
                               errors.empty() ? "; " + serial_hint(qemu) : ":\n" + errors)};
}

Status check_file(const std::string& path, const std::string& what, const std::string& hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(ErrorKind::Usage, fmt::format("{} {}: {}{}", what, path, std::strerror(errno), hint));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    return make_error(ErrorKind::Usage, fmt::format("{} {} is not a file", what, path));
  return {};
}

// One measurement PC: its trace disk, its virtual probe and its QEMU.
// A writable copy of OVMF's variable store (the firmware writes its boot entries into it), removed at the
// end.
struct UefiVars {
  std::string path;
  UefiVars() = default;
  UefiVars(const UefiVars&) = delete;
  UefiVars& operator=(const UefiVars&) = delete;
  ~UefiVars() {
    if (!path.empty()) ::unlink(path.c_str());
  }
  Status copy_from(const std::string& from, const std::string& to) {
    std::error_code error;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, error);
    if (error) return make_error(ErrorKind::Io, fmt::format("{}: {}", to, error.message()));
    path = to;
    return {};
  }
};

struct Machine {
  std::string disk;
  std::string label;  // "" for a single machine, else "machine K: " before its messages
  SharedMemoryFile shm;
  std::unique_ptr<QemuProcess> qemu;
  Scenario scenario;  // what is played into its probe
  std::vector<SentEvent> sent;
  std::optional<QemuExit> exit;
  // Bounds on the guest-to-host TSC offset (see fidelity.h): host TSC at the look before the kernel was seen
  // Capturing and at the look that saw it, each minus the capture_start_tsc the kernel published.
  uint64_t host_tsc_before_capturing = 0;
  std::optional<std::pair<int64_t, int64_t>> offset_bounds;
  UefiVars uefi_vars;           // --firmware uefi: this machine's copy of the OVMF variable store
  uint64_t origin_tsc = 0;      // guest clock: the guest's TSC at the scenario's time 0
  uint64_t utc_anchor_tsc = 0;  // guest clock: its TSC at RunReport::utc_anchor_ns
  size_t pps_pulses = 0;
  std::optional<HoldPipe> hold_pipe;  // guest clock: behind its debugcon, for the kernel's wait at the hold

  Control* control() const { return shm.control(); }
};

// Everything that outlives the run proper: the outer function writes the logs from it whatever happened.
struct RunState {
  std::vector<std::unique_ptr<Machine>> machines;
};

HostError labelled(const Machine& machine, HostError error) {
  error.message = machine.label + error.message;
  return error;
}

// --- live mode (--run CMD) ---

enum class LiveEnd { CommandExited, Interrupted, QemuExited, KernelLeftCapturing, Timeout };

// PATH with the running `ett`'s directory first: `--run 'ett signal ...'` finds this very ett (and its
// libettprobe tools) without an install or a full path.
std::string command_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const char* path = std::getenv("PATH");
  const std::string rest = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  return error ? "PATH=" + rest : "PATH=" + self.parent_path().string() + ":" + rest;
}

// Runs the --run command while the kernel captures: it signals through libettprobe (ETT_PROBE_URL), which
// paces each write on the kernel's heartbeat and logs it (ETT_PROBE_LOG). Returns how the wait ended; the
// command's signals become the machine's sent events, in host-TSC order.
Expected<LiveEnd> run_live_command(const RunOptions& options, Machine& machine, const ProbeLayout& layout,
                                   std::optional<int> cpu, uint64_t deadline, RunReport& report) {
  report.live = true;
  report.paced = !options.free_run;
  ETT_TRY_ASSIGN(TemporaryFile log, TemporaryFile::create());
  const std::vector<std::string> environment = {
      fmt::format("ETT_PROBE_URL=shm:{}?layout={}{}", machine.shm.path(), layout.name(),
                  options.free_run ? "&pace=0" : ""),
      fmt::format("ETT_PROBE_LAYOUT={}", layout.name()), "ETT_PROBE_LOG=" + log.path(), command_path()};
  // The command gets the injector's CPU: QEMU's vCPU thread keeps its own CPU, as with a scenario.
  ETT_TRY_ASSIGN(LiveCommand command, LiveCommand::start(options.run_command, environment, cpu));
  Control* control = machine.control();
  LiveEnd end = LiveEnd::CommandExited;
  for (;;) {
    if (std::optional<int> status = command.poll()) {
      report.command_failure = command_failure(*status);
      break;
    }
    if (g_interrupted.load())
      end = LiveEnd::Interrupted;
    else if (machine.qemu->poll())
      end = LiveEnd::QemuExited;
    else if (state_of(control) != KernelState::Capturing)
      end = LiveEnd::KernelLeftCapturing;
    else if (monotonic_ns() >= deadline)
      end = LiveEnd::Timeout;
    if (end != LiveEnd::CommandExited) {
      command.terminate();
      report.command_terminated = true;
      break;
    }
    sleep_ns(kPollNs);
  }
  report.playback_ns = elapsed_ns(command.start_ns(), monotonic_ns());
  ETT_TRY_ASSIGN(machine.sent, read_signal_log(log.path(), command.start_ns()));
  report.events_sent = report.scenario_events = machine.sent.size();
  return end;
}

// The scenario's events plus the sync edges on `probe` every `period_ns` from 0 to the scenario's end (at
// least three edges, the fewest `ett analyze align` fits), as one scenario: the edges toggle the probe's
// lowest line. `events` empty: the sync edges alone (the other machines).
Expected<Scenario> with_sync_edges(const Scenario& scenario, bool include_events, uint8_t probe,
                                   uint64_t period_ns, const std::string& file_name) {
  for (const ScenarioEvent& event : scenario.events)
    if (event.probe == probe)
      return make_error(ErrorKind::Usage,
                        fmt::format("{}:{}: the scenario uses probe {}, the --sync-probe: choose another one",
                                    file_name, event.line_number, probe));
  const uint64_t last = scenario.events.empty() ? 0 : scenario.events.back().time_ns;
  if (period_ns == 0)
    return make_error(ErrorKind::Usage, "--sync-period: at least 0.001 us (the edges are timed in ns)");
  const uint64_t edges = std::max<uint64_t>(3, last / period_ns + 1);
  if (edges > kMaxAddedEdges)
    return make_error(ErrorKind::Usage,
                      fmt::format("--sync-period {:g} us over the scenario's {:g} s makes {} sync edges; at "
                                  "most {} (a longer --sync-period)",
                                  static_cast<double>(period_ns) / 1e3, static_cast<double>(last) / 1e9,
                                  edges, kMaxAddedEdges));
  auto line = [](uint64_t time_ns, unsigned p, unsigned code) {
    return fmt::format("{}.{:03d} {} {}\n", time_ns / 1000, time_ns % 1000, p, code);
  };
  std::string text;
  size_t next = 0;
  const uint8_t initial = scenario.layout.code_of(scenario.initial_lines, probe);
  for (uint64_t k = 0; k < edges; ++k) {
    const uint64_t time = k * period_ns;
    for (; include_events && next < scenario.events.size() && scenario.events[next].time_ns <= time; ++next)
      text += line(scenario.events[next].time_ns, scenario.events[next].probe, scenario.events[next].code);
    text += line(time, probe, initial ^ ((k % 2 == 0) ? 1u : 0u));
  }
  for (; include_events && next < scenario.events.size(); ++next)
    text += line(scenario.events[next].time_ns, scenario.events[next].probe, scenario.events[next].code);
  return parse_scenario(text, file_name + " with sync edges", scenario.layout, scenario.initial_lines);
}

// A PPS line's edges for a playback whose time 0 is UTC `utc_at_zero` (ns since 1970): a rising edge at
// each whole second from 1 ms after time 0 to one second past `last_ns` (at least three), moved by a normal
// deviate of `jitter_ns`, and a falling edge 100 ms after it.
std::vector<PpsEdge> pps_edges(int64_t utc_at_zero, uint64_t last_ns, double jitter_ns, uint64_t seed) {
  constexpr int64_t kSecond = 1'000'000'000;
  constexpr int64_t kWidthNs = 100'000'000;
  constexpr int64_t kFirstAfterNs = 1'000'000;
  std::mt19937_64 random(seed);
  std::normal_distribution<double> deviate(0.0, jitter_ns > 0 ? jitter_ns : 1.0);
  std::vector<PpsEdge> edges;
  int64_t second = (utc_at_zero + kFirstAfterNs + kSecond - 1) / kSecond;
  for (size_t pulses = 0;; ++second, ++pulses) {
    const int64_t due = second * kSecond - utc_at_zero;
    if (pulses >= 3 && due > static_cast<int64_t>(last_ns) + kSecond) break;
    const int64_t jitter = jitter_ns > 0 ? std::llround(deviate(random)) : 0;
    const int64_t rise = std::max<int64_t>(0, due + jitter);
    edges.push_back(PpsEdge{static_cast<uint64_t>(rise), true, second});
    edges.push_back(PpsEdge{static_cast<uint64_t>(rise + kWidthNs), false, second});
  }
  return edges;
}

// The decoded session a machine's kernel reported, paired with what was sent to it.
Expected<FidelityReport> assess_machine(const Machine& machine, uint32_t session, bool guest_clock) {
  ETT_TRY_ASSIGN(TraceImage image, TraceImage::open(machine.disk));
  ETT_TRY_ASSIGN(size_t index, image.find_session(session));
  ETT_TRY_ASSIGN(SessionData data, image.read_session(index));
  const format::SessionHeader& header = data.summary.header;
  return assess_fidelity(
      machine.sent, data.events,
      CaptureWindow{header.tsc_hz, header.capture_end_tsc, machine.offset_bounds, guest_clock});
}

// Machines 2..N: where `ett analyze align` should put each capture against machine 1's (see MachineResult).
void add_alignment_truth(RunReport& report) {
  if (report.machines.size() < 2) return;
  const MachineResult& reference = report.machines.front();
  if (!reference.fidelity || reference.tsc_hz == 0) return;
  auto clock_of = [](const MachineResult& machine) {
    return CaptureClock{machine.tsc_hz, machine.capture_start_tsc, machine.origin_tsc,
                        machine.fidelity->offset_ticks};
  };
  for (size_t k = 1; k < report.machines.size(); ++k) {
    MachineResult& machine = report.machines[k];
    if (!machine.fidelity || machine.tsc_hz == 0) continue;
    const AlignmentTruth truth = alignment_truth(clock_of(reference), clock_of(machine), report.guest_clock);
    machine.truth_offset_ns = truth.offset_ns;
    machine.truth_drift_ppm = truth.drift_ppm;
  }
}

// The steps of one run, in order: inputs(), make_disks(), start_machines(), wait_for_capturing(), then
// play_live() or play_scenario(), stop_and_wait(), verdict() and check_disks(). Each step returns an error
// that ends the run; the caller (run_qemu) writes the logs from `state` whatever happened.
class RunSteps {
 public:
  RunSteps(const RunOptions& options, std::FILE* progress, RunState& state)
      : m_options(options),
        m_progress(progress),
        m_state(state),
        m_run_start(monotonic_ns()),
        m_deadline(m_run_start + static_cast<uint64_t>(options.timeout_s * 1e9)),
        m_live(!options.run_command.empty()) {}

  Expected<RunReport> run() {
    ETT_TRY(check_options());
    ETT_TRY(inputs());
    ETT_TRY(make_disks());
    ETT_TRY(start_machines());
    ETT_TRY(wait_for_capturing());
    m_report.tsc_hz = load(first().control()->tsc_hz);
    const bool any_exited = std::any_of(m_state.machines.begin(), m_state.machines.end(),
                                        [](const auto& m) { return m->qemu->poll().has_value(); });
    if (any_exited) {
      m_report.kernel_stopped_early = true;  // a kernel finished before the scenario could start
    } else {
      ETT_TRY(m_live ? play_live() : play_scenario());
      send_stop();
    }
    ETT_TRY(wait_for_exit());
    ETT_TRY(verdict());
    ETT_TRY(check_disks());
    return m_report;
  }

 private:
  Machine& first() { return *m_state.machines.front(); }

  Status check_options() const {
    const RunOptions& options = m_options;
    if (!options.kernel.empty() && !options.iso.empty())
      return make_error(ErrorKind::Usage, "give either --kernel or --iso, not both");
    if (!options.iso.empty() && options.append_given)
      return make_error(ErrorKind::Usage,
                        "--append does not apply to --iso: the GRUB menu's QEMU entry sets the "
                        "kernel arguments");
    if (options.firmware == Firmware::Uefi && options.iso.empty())
      return make_error(ErrorKind::Usage,
                        "--firmware uefi boots only --iso ISO (QEMU's -kernel loader needs the BIOS)");
    if (options.timeout_s <= 0 || options.boot_timeout_s <= 0)
      return make_error(ErrorKind::Usage, "timeouts must be positive");
    if (options.machines < 1) return make_error(ErrorKind::Usage, "--machines must be at least 1");
    if (options.machines > 1 && options.sync_probe == 0 && options.pps_line < 0)
      return make_error(ErrorKind::Usage,
                        "--machines N needs --sync-probe P (the probe whose edges every machine receives) or "
                        "--pps-line Dn (a PPS line on every machine)");
    if (options.pps_line > 7)
      return make_error(ErrorKind::Usage, "--pps-line: expected a data line D0 to D7");
    if (options.pps_jitter_ns < 0 || options.pps_jitter_ns > 100e6)
      return make_error(ErrorKind::Usage, "--pps-jitter-ns must be between 0 and 100000000");
    if (m_live && options.pps_line >= 0)
      return make_error(ErrorKind::Usage, "--pps-line plays with a --scenario, not with --run");
    if (options.sync_probe != 0 && options.sync_period_us <= 0)
      return make_error(ErrorKind::Usage, "--sync-period must be positive");
    if (m_live == !options.scenario.empty())
      return make_error(ErrorKind::Usage, "give either --scenario FILE or --run CMD (one of them, not both)");
    if (m_live && (options.machines > 1 || options.sync_probe != 0))
      return make_error(
          ErrorKind::Usage,
          "--run drives one machine's probe: it does not combine with --machines or --sync-probe");
    return {};
  }

  // The kernel or ISO, the layout from --append, and the scenario each machine plays.
  Status inputs() {
    const RunOptions& options = m_options;
    m_kernel = options.kernel;
    if (options.iso.empty()) {
      if (m_kernel.empty()) m_kernel = default_kernel_path();
      ETT_TRY(check_file(m_kernel, "kernel",
                         options.kernel.empty() ? " (build it, or give --kernel ELF or --iso ISO)" : ""));
    } else {
      ETT_TRY(check_file(options.iso, "ISO", ""));
    }
    if (options.firmware == Firmware::Uefi) {
      ETT_TRY(check_file(kOvmfCode, "--firmware uefi: OVMF firmware", " (install Debian's ovmf package)"));
      ETT_TRY(
          check_file(kOvmfVars, "--firmware uefi: OVMF variable store", " (install Debian's ovmf package)"));
    }
    for (const std::string& word : split_words(options.append)) {
      if (!word.starts_with("layout=")) continue;
      auto parsed = ProbeLayout::from_name(word.substr(7));
      if (!parsed)
        return make_error(
            ErrorKind::Usage,
            fmt::format("--append: unknown layout '{}' (use 2x4, 8x1, 4x2 or 1x8)", word.substr(7)));
      m_layout = *parsed;
    }
    Scenario scenario;
    scenario.layout = m_layout;
    scenario.initial_lines = options.initial_lines;
    if (!m_live) {
      ETT_TRY_ASSIGN(scenario, load_scenario(options.scenario, m_layout, options.initial_lines));
    }
    if (options.sync_probe > m_layout.probe_count())
      return make_error(ErrorKind::Usage,
                        fmt::format("--sync-probe {}: layout {} has probes 1 to {}", options.sync_probe,
                                    m_layout.name(), m_layout.probe_count()));
    if (options.sync_probe == 0) {
      // Without sync edges, machines 2..N receive only their PPS line.
      Scenario quiet;
      quiet.layout = m_layout;
      quiet.initial_lines = options.initial_lines;
      m_scenarios.push_back(std::move(scenario));
      for (unsigned k = 1; k < options.machines; ++k) m_scenarios.push_back(quiet);
    } else {
      const auto period = static_cast<uint64_t>(options.sync_period_us * 1e3);
      for (unsigned k = 0; k < options.machines; ++k) {
        ETT_TRY_ASSIGN(Scenario played,
                       with_sync_edges(scenario, k == 0, options.sync_probe, period, options.scenario));
        m_scenarios.push_back(std::move(played));
      }
    }
    if (options.pps_line >= 0)  // refused before QEMU starts: the scenario must leave the PPS line alone
      for (const Scenario& played : m_scenarios)
        ETT_TRY(with_pps_edges(played, options.pps_line, {}, options.scenario));
    m_report.scenario_events = m_scenarios.front().events.size();
    return {};
  }

  // A missing trace disk is made. An existing disk is not checked here: the kernel reads its label and
  // refuses a disk that is not a trace disk, and the boot tests exercise exactly that refusal.
  Status make_disks() {
    for (unsigned k = 0; k < m_options.machines; ++k) {
      const std::string disk = machine_disk_path(m_options.disk, k + 1, m_options.machines);
      std::error_code exists_error;
      if (std::filesystem::exists(disk, exists_error)) continue;
      MakeDiskOptions make;
      make.path = disk;
      make.name = "ett qemu run";
      ETT_TRY(make_disk(make));
      m_report.disk_created = true;
      if (m_progress)
        fmt::print(m_progress, "ett: created trace disk {} ({} MiB)\n", disk, kDefaultDiskBytes >> 20);
    }
    return {};
  }

  // Shared memory and QEMU, one per machine. The injector gets a CPU of its own; QEMU runs on the others.
  Status start_machines() {
    m_injector_cpu = choose_injector_cpu();
    for (unsigned k = 0; k < m_options.machines; ++k) {
      ETT_TRY_ASSIGN(SharedMemoryFile shm, SharedMemoryFile::create(vprobe::kMinSize));
      auto machine = std::unique_ptr<Machine>(
          new Machine{machine_disk_path(m_options.disk, k + 1, m_options.machines),
                      m_options.machines > 1 ? fmt::format("machine {}: ", k + 1) : "",
                      std::move(shm),
                      nullptr,
                      std::move(m_scenarios[k]),
                      {},
                      {}});
      *machine->shm.lines() = machine->scenario.initial_lines;
      m_state.machines.push_back(std::move(machine));
    }
    for (auto& machine : m_state.machines) {
      if (m_options.firmware == Firmware::Uefi)
        ETT_TRY(machine->uefi_vars.copy_from(kOvmfVars, uefi_vars_path(machine->shm.path())));
      if (uses_guest_clock(m_options)) {
        ETT_TRY_ASSIGN(HoldPipe pipe, HoldPipe::create(hold_pipe_path(machine->shm.path())));
        machine->hold_pipe.emplace(std::move(pipe));
      }
      machine->host_tsc_before_capturing = __rdtsc();  // no kernel runs before its QEMU
      ETT_TRY_ASSIGN(machine->qemu,
                     QemuProcess::start(qemu_command(m_options, m_kernel, machine->shm.path(), machine->disk),
                                        m_options.verbose ? stdout : nullptr, m_injector_cpu));
    }
    m_qemu_start = monotonic_ns();
    return {};
  }

  void kill_all() {
    for (auto& machine : m_state.machines) machine->qemu->kill_and_wait();
  }
  Status interrupted() {
    kill_all();
    return make_error(ErrorKind::Interrupted, "interrupted: QEMU stopped, temporary files removed");
  }
  // A kernel in state Failed exits through isa-debug-exit; give it a moment, then judge by what it printed.
  Status failed_kernel(Machine& machine, const char* phase) {
    QemuProcess& qemu = *machine.qemu;
    const uint64_t until = monotonic_ns() + kFailedExitGraceNs;
    while (!qemu.poll() && monotonic_ns() < until) sleep_ns(kPollNs);
    HostError error =
        labelled(machine, failure_after_exit(qemu.poll() ? *qemu.poll() : qemu.kill_and_wait(), qemu, phase));
    kill_all();
    return ett::Failure<HostError>{error};
  }
  Status qemu_exited(Machine& machine, const char* phase) {
    HostError error = labelled(machine, failure_after_exit(*machine.qemu->poll(), *machine.qemu, phase));
    kill_all();
    return ett::Failure<HostError>{error};
  }

  // One look at a booting machine: is it capturing (or already done)? Bounds its TSC offset when it is.
  Expected<bool> boot_look(Machine& machine) {
    Control* control = machine.control();
    const uint64_t looked = __rdtsc();
    bool ready = false;
    if (kernel_found_probe(control)) {
      // QEMU has it mapped: the name is no longer needed (--run: it is the command's URL)
      if (!m_live) machine.shm.unlink();
      if (machine.hold_pipe) machine.hold_pipe->unlink();
      const KernelState kernel_state = state_of(control);
      if (kernel_state == KernelState::Capturing) {
        ready = true;
        const uint64_t seen = __rdtsc();
        const uint64_t start_tsc = load(control->capture_start_tsc);
        // The kernel could be descheduled between its start TSC and its state store: a margin on the low
        // side.
        const uint64_t margin = load(control->tsc_hz) * kOffsetMarginNs / 1'000'000'000;
        machine.offset_bounds = std::pair<int64_t, int64_t>{
            static_cast<int64_t>(machine.host_tsc_before_capturing - margin - start_tsc),
            static_cast<int64_t>(seen - start_tsc)};
      }
      if (kernel_state == KernelState::Failed) return failed_kernel(machine, "booting").failure();
    }
    if (!ready) machine.host_tsc_before_capturing = looked;
    if (auto exit = machine.qemu->poll(); exit && !ready) {
      // A short run (a tiny buffer, a short limit=) can capture, dump and exit between two of our polls.
      if (kernel_found_probe(control) && state_of(control) == KernelState::Done) return true;
      return qemu_exited(machine, "booting").failure();
    }
    return ready;
  }

  // Boot: wait for every kernel to find its probe and start capturing.
  Status wait_for_capturing() {
    const uint64_t boot_deadline =
        std::min(m_deadline, m_qemu_start + static_cast<uint64_t>(m_options.boot_timeout_s * 1e9));
    std::vector<bool> ready(m_state.machines.size(), false);
    for (;;) {
      if (g_interrupted.load()) return interrupted();
      for (size_t k = 0; k < m_state.machines.size(); ++k) {
        if (ready[k]) continue;
        ETT_TRY_ASSIGN(bool now_ready, boot_look(*m_state.machines[k]));
        ready[k] = now_ready;
      }
      if (std::count(ready.begin(), ready.end(), true) == static_cast<long>(ready.size())) break;
      if (monotonic_ns() >= boot_deadline) {
        const size_t late_index =
            static_cast<size_t>(std::find(ready.begin(), ready.end(), false) - ready.begin());
        const Machine& late = *m_state.machines[late_index];
        Control* control = late.control();
        const std::string state_text =
            kernel_found_probe(control) ? state_name(state_of(control)) : "probe not found";
        const std::string hint = serial_hint(*late.qemu);
        kill_all();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("{}timeout in the boot phase: the kernel did not start capturing within {} "
                        "(kernel state: {}); {}",
                        late.label, seconds(boot_deadline - m_qemu_start), state_text, hint));
      }
      sleep_ns(kPollNs);
    }
    m_report.boot_ns = elapsed_ns(m_qemu_start, monotonic_ns());
    return {};
  }

  // Capture: the --run command signals through libettprobe.
  Status play_live() {
    Machine& machine = first();
    ETT_TRY_ASSIGN(LiveEnd end,
                   run_live_command(m_options, machine, m_layout, m_injector_cpu, m_deadline, m_report));
    switch (end) {
      case LiveEnd::CommandExited:
        return {};
      case LiveEnd::Interrupted:
        return interrupted();
      case LiveEnd::QemuExited:
        return qemu_exited(machine, "the --run command was running");
      case LiveEnd::Timeout:
        kill_all();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("timeout in the capture phase: the --run command was still running after "
                        "{} (it was stopped); raise --timeout",
                        seconds(static_cast<uint64_t>(m_options.timeout_s * 1e9))));
      case LiveEnd::KernelLeftCapturing:
        m_report.kernel_stopped_early = true;
        if (state_of(machine.control()) == KernelState::Failed)
          return failed_kernel(machine, "the --run command was running");
        if (m_progress)
          fmt::print(m_progress,
                     "ett: warning: the kernel stopped capturing (reason: {}) while the --run command was "
                     "running; the command was stopped\n",
                     format::stop_reason_name(load(machine.control()->stop_reason)));
        return {};
    }
    return {};
  }

  // Capture: play the scenario into every machine's probe.
  Status play_scenario() {
    enum class Abort { None, Interrupted, QemuExited, KernelLeftCapturing, Timeout } abort = Abort::None;
    Machine* culprit = nullptr;
    auto keep_going = [&] {
      if (g_interrupted.load()) return (abort = Abort::Interrupted) == Abort::None;
      for (auto& machine : m_state.machines) {
        culprit = machine.get();
        // The state first: a kernel that stopped by itself (stop=, limit=) may have dumped and left QEMU
        // before this look, which is not a QEMU failure (on the guest's clock the injector waits for a clock
        // that stood still meanwhile, so it looks only now).
        if (state_of(machine->control()) != KernelState::Capturing)
          abort = Abort::KernelLeftCapturing;
        else if (machine->qemu->poll())
          abort = Abort::QemuExited;
        if (abort != Abort::None) return false;
      }
      if (monotonic_ns() >= m_deadline) abort = Abort::Timeout;
      return abort == Abort::None;
    };
    m_report.paced = !m_options.free_run;
    std::vector<PlayTarget> targets;
    for (auto& machine : m_state.machines) {
      Control* control = machine->control();
      targets.push_back(PlayTarget{
          &machine->scenario, machine->shm.lines(), m_options.free_run ? nullptr : &control->heartbeat,
          &control->clock_256, &control->heartbeat, load(control->capture_start_tsc), load(control->tsc_hz),
          0, &control->hold_256, machine->hold_pipe ? &*machine->hold_pipe : nullptr});
    }
    const bool guest_clock = uses_guest_clock(m_options);
    ETT_TRY(anchor_utc(targets, guest_clock));
    PlayResult played = guest_clock ? play_on_guest_clocks(targets, keep_going, m_injector_cpu)
                                    : play_scenarios(targets, keep_going, m_injector_cpu, m_start_monotonic);
    if (!played.realtime && m_progress)
      fmt::print(m_progress,
                 "ett: note: the injector runs at normal priority ({}): on a busy host its writes can be "
                 "late\n",
                 m_injector_cpu ? "SCHED_FIFO not permitted" : "fewer than two CPUs to pin it to");
    m_report.guest_clock = played.guest_clock;
    m_report.held_back_max_ns = played.held_back_max_ns;
    if (!played.guest_rate.empty()) m_report.guest_rate = played.guest_rate.front();
    for (size_t k = 0; k < m_state.machines.size() && k < played.origin_tsc.size(); ++k)
      m_state.machines[k]->origin_tsc = played.origin_tsc[k];
    for (size_t k = 0; k < m_state.machines.size(); ++k) {
      m_state.machines[k]->sent = std::move(played.sent_per_target[k]);
      add_utc_truth(*m_state.machines[k], targets[k], guest_clock);
    }
    const std::vector<SentEvent>& sent = first().sent;
    m_report.paced_writes = played.paced_writes;
    m_report.events_sent = sent.size();
    m_report.playback_ns = played.duration_ns;
    if (played.guest_clock)
      m_report.guest_playback_ns = guest_span_ns(sent, first().origin_tsc, load(first().control()->tsc_hz));
    m_report.realtime = played.realtime;
    switch (abort) {
      case Abort::None:
        break;
      case Abort::Interrupted:
        return interrupted();
      case Abort::QemuExited:
        return qemu_exited(*culprit, "the scenario was playing");
      case Abort::Timeout:
        kill_all();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("timeout in the capture phase: the scenario was still playing after {} ({} of "
                        "{} events sent); raise --timeout",
                        seconds(static_cast<uint64_t>(m_options.timeout_s * 1e9)), sent.size(),
                        m_report.scenario_events));
      case Abort::KernelLeftCapturing:
        m_report.kernel_stopped_early = true;
        if (state_of(culprit->control()) == KernelState::Failed)
          return failed_kernel(*culprit, "the scenario was playing");
        if (m_progress)
          fmt::print(m_progress,
                     "ett: warning: {}the kernel stopped capturing (reason: {}) after {} of {} events were "
                     "sent; the rest were not sent\n",
                     culprit->label, format::stop_reason_name(load(culprit->control()->stop_reason)),
                     culprit->sent.size(), culprit->scenario.events.size());
        break;
    }
    std::vector<uint64_t> late;
    for (const SentEvent& event : sent)
      late.push_back(event.sent_ns - std::min(event.sent_ns, event.scheduled_ns));
    if (!late.empty()) {
      std::sort(late.begin(), late.end());
      m_report.max_late_ns = late.back();
      m_report.median_late_ns = late[late.size() / 2];
    }
    return {};
  }

  // Time 0 of the playback lies kUtcLeadNs ahead, on the clock the scenario plays on; UTC is read next to
  // that clock now (RunReport::utc_anchor_ns says how UTC is defined), and the PPS edges, which need it, are
  // merged into each machine's scenario meanwhile.
  Status anchor_utc(std::vector<PlayTarget>& targets, bool guest_clock) {
    constexpr uint64_t kUtcLeadNs = 50'000'000;
    if (guest_clock) {
      for (size_t k = 0; k < targets.size(); ++k) {
        const uint64_t now = published_guest_clock(targets[k]);
        m_state.machines[k]->utc_anchor_tsc = now;
        targets[k].origin_tsc = now + static_cast<uint64_t>(static_cast<double>(kUtcLeadNs) *
                                                            static_cast<double>(targets[k].tsc_hz) / 1e9);
      }
      m_report.utc_anchor_ns = realtime_ns();
    } else {
      // CLOCK_REALTIME between two CLOCK_MONOTONIC reads: the pair is known to their gap.
      const uint64_t before = monotonic_ns();
      m_report.utc_anchor_ns = realtime_ns();
      m_anchor_monotonic = before + (monotonic_ns() - before) / 2;
      m_start_monotonic = m_anchor_monotonic + kUtcLeadNs;
    }
    const int64_t utc_at_zero = m_report.utc_anchor_ns + static_cast<int64_t>(kUtcLeadNs);
    m_report.pps_line = m_options.pps_line;
    if (m_options.pps_line < 0) return {};
    uint64_t last = 0;
    for (const auto& machine : m_state.machines)
      if (!machine->scenario.events.empty()) last = std::max(last, machine->scenario.events.back().time_ns);
    for (size_t k = 0; k < m_state.machines.size(); ++k) {
      Machine& machine = *m_state.machines[k];
      const std::vector<PpsEdge> edges =
          pps_edges(utc_at_zero, last, m_options.pps_jitter_ns, m_options.pps_seed + k);
      ETT_TRY_ASSIGN(machine.scenario,
                     with_pps_edges(machine.scenario, m_options.pps_line, edges, m_options.scenario));
    }
    return {};
  }

  // The true UTC of each write of `machine` (RunReport::utc_anchor_ns), and which PPS edge it was.
  void add_utc_truth(Machine& machine, const PlayTarget& target, bool guest_clock) {
    for (SentEvent& sent : machine.sent) {
      if (sent.index < machine.scenario.events.size()) {
        sent.pps_edge = machine.scenario.events[sent.index].pps_edge;
        sent.pps_second = machine.scenario.events[sent.index].pps_second;
        if (sent.pps_edge > 0) ++machine.pps_pulses;
      }
      if (guest_clock) {
        const uint64_t at = std::max(sent.guest_tsc_due, sent.guest_tsc_before);
        const auto ticks = static_cast<double>(static_cast<int64_t>(at - machine.utc_anchor_tsc));
        sent.utc_ns = m_report.utc_anchor_ns +
                      static_cast<int64_t>(std::llround(ticks * 1e9 / static_cast<double>(target.tsc_hz)));
      } else {
        sent.utc_ns = m_report.utc_anchor_ns +
                      static_cast<int64_t>(m_start_monotonic + sent.sent_ns - m_anchor_monotonic);
      }
    }
  }

  // After the scenario or the --run command: let the kernel see the last write, then ask every kernel to
  // stop.
  void send_stop() {
    sleep_ns(kSettleNs);
    for (auto& machine : m_state.machines)
      std::atomic_ref<uint32_t>(machine->control()->command)
          .store(static_cast<uint32_t>(vprobe::HostCommand::Stop), std::memory_order_release);
  }

  // Every kernel dumps and leaves QEMU.
  Status wait_for_exit() {
    const uint64_t stop_sent = monotonic_ns();
    for (auto& machine : m_state.machines) {
      for (;;) {
        if (g_interrupted.load()) return interrupted();
        if ((machine->exit = machine->qemu->poll())) break;
        if (monotonic_ns() >= m_deadline) {
          const KernelState kernel_state = state_of(machine->control());
          const std::string hint = serial_hint(*machine->qemu);
          kill_all();
          return make_error(
              ErrorKind::Timeout,
              fmt::format("{}timeout in the dump phase: QEMU did not exit within {} of the stop "
                          "command (--timeout {} s; kernel state: {}); {}",
                          machine->label, seconds(monotonic_ns() - stop_sent), m_options.timeout_s,
                          state_name(kernel_state), hint));
        }
        sleep_ns(kPollNs);
      }
    }
    m_report.total_ns = elapsed_ns(m_qemu_start, monotonic_ns());
    return {};
  }

  // Each kernel must have left through isa-debug-exit with success, said so on serial, and be Done.
  Status verdict() {
    for (auto& machine : m_state.machines) {
      Control* control = machine->control();
      const QemuExit& exit = *machine->exit;
      const bool success_status = exit.exited && exit.status == vprobe::qemu_status_for(vprobe::kExitSuccess);
      const bool ok_line = !find_line_starting(machine->qemu->serial(), "ETT: RESULT OK").empty();
      const bool done = kernel_found_probe(control) && state_of(control) == KernelState::Done;
      if (!(success_status && ok_line && done))
        return ett::Failure<HostError>{
            labelled(*machine, failure_after_exit(exit, *machine->qemu, "dumping"))};
      MachineResult result;
      result.disk = machine->disk;
      result.events_sent = machine->sent.size();
      result.kernel_events = load(control->event_count);
      result.session_number = load(control->session_number);
      result.stop_reason = load(control->stop_reason);
      result.tsc_hz = load(control->tsc_hz);
      result.utc_anchor_tsc = machine->utc_anchor_tsc;
      result.pps_pulses = machine->pps_pulses;
      m_report.machines.push_back(result);
    }
    m_report.kernel_events = m_report.machines.front().kernel_events;
    m_report.session_number = m_report.machines.front().session_number;
    m_report.stop_reason = m_report.machines.front().stop_reason;
    return {};
  }

  // The kernel says it wrote the session: check that the disk agrees (dump=serial and dump=none leave the
  // disk alone; the serial log holds a dump=serial session), then compare it with what was sent.
  Status check_disks() {
    for (const std::string& word : split_words(m_options.append))
      if (word == "dump=serial" || word == "dump=none") return {};
    for (size_t k = 0; k < m_state.machines.size(); ++k) {
      const Machine& machine = *m_state.machines[k];
      MachineResult& result = m_report.machines[k];
      auto image = TraceImage::open(machine.disk);
      if (!image)
        return make_error(ErrorKind::KernelFailure,
                          machine.label + "after the run: " + image.error().message);
      auto index = image->find_session(result.session_number);
      if (!index)
        return make_error(ErrorKind::KernelFailure,
                          machine.label +
                              "the kernel reported success, but the disk does not hold its session: " +
                              index.error().message);
      ETT_TRY_ASSIGN(SessionSummary summary, image->check_session(*index));
      if (summary.health != SessionHealth::Ok)
        return make_error(
            ErrorKind::KernelFailure,
            fmt::format("{}the kernel reported success, but session {} on {} is {}", machine.label,
                        result.session_number, machine.disk, summary.describe()));
      if (summary.header.mode != static_cast<uint32_t>(format::CaptureMode::Capture))
        continue;  // no probe events
      ETT_TRY_ASSIGN(result.fidelity, assess_machine(machine, result.session_number, m_report.guest_clock));
      result.capture_start_tsc = summary.header.capture_start_tsc;
      result.origin_tsc = machine.origin_tsc;
    }
    add_alignment_truth(m_report);
    return {};
  }

  const RunOptions& m_options;
  std::FILE* m_progress;
  RunState& m_state;
  const uint64_t m_run_start;
  const uint64_t m_deadline;
  const bool m_live;
  RunReport m_report;
  std::string m_kernel;
  ProbeLayout m_layout;
  std::vector<Scenario> m_scenarios;
  std::optional<int> m_injector_cpu;
  uint64_t m_qemu_start = 0;
  uint64_t m_anchor_monotonic = 0;  // host clock: CLOCK_MONOTONIC when utc_anchor_ns was read
  uint64_t m_start_monotonic = 0;   // host clock: the playback's time 0
};

Expected<RunReport> run(const RunOptions& options, std::FILE* progress, RunState& state) {
  return RunSteps(options, progress, state).run();
}

}  // namespace

std::optional<uint64_t> guest_span_ns(const std::vector<SentEvent>& sent, uint64_t origin_tsc,
                                      uint64_t tsc_hz) {
  if (tsc_hz == 0) return std::nullopt;
  uint64_t last = 0;
  for (const SentEvent& event : sent) last = std::max({last, event.guest_tsc_due, event.guest_tsc_before});
  if (last == 0) return std::nullopt;
  return static_cast<uint64_t>(
      std::llround(static_cast<double>(elapsed_ns(origin_tsc, last)) * 1e9 / static_cast<double>(tsc_hz)));
}

std::string machine_disk_path(const std::string& path, unsigned machine, unsigned machines) {
  if (machines <= 1) return path;
  const std::filesystem::path original(path);
  std::filesystem::path numbered =
      original.parent_path() /
      fmt::format("{}-{}{}", original.stem().string(), machine, original.extension().string());
  return numbered.string();
}

std::string default_kernel_path() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "ett-kernel.elf";
  // The build tree keeps it next to ett; an install (cmake --install, the .deb) puts it in PREFIX/lib/ett.
  const std::filesystem::path beside = self.parent_path() / "ett-kernel.elf";
  const std::filesystem::path installed = self.parent_path().parent_path() / "lib" / "ett" / "ett-kernel.elf";
  return std::filesystem::exists(beside, error) || !std::filesystem::exists(installed, error)
             ? beside.string()
             : installed.string();
}

Expected<RunReport> run_qemu(const RunOptions& options, std::FILE* progress) {
  SignalGuard signals;
  RunState state;
  auto result = run(options, progress, state);
  for (auto& machine : state.machines)
    if (machine->qemu) machine->qemu->kill_and_wait();  // no-op when it has exited

  // The logs are written whatever happened: they are what explains a failure. Several machines: one file
  // each, named like their disks (serial-1.log, ...).
  std::string log_problem;
  auto keep_problem = [&](const std::string& problem) {
    if (log_problem.empty()) log_problem = problem;
  };
  const unsigned count = static_cast<unsigned>(state.machines.size());
  for (unsigned k = 0; k < count; ++k) {
    const Machine& machine = *state.machines[k];
    if (!options.serial_log.empty() && machine.qemu) {
      const std::string path = machine_disk_path(options.serial_log, k + 1, count);
      std::FILE* file = std::fopen(path.c_str(), "w");
      const std::string serial = machine.qemu->serial();
      if (!file || std::fwrite(serial.data(), 1, serial.size(), file) != serial.size())
        keep_problem(errno_message(path, errno));
      if (file && std::fclose(file) != 0) keep_problem(errno_message(path, errno));
    }
    if (!options.sent_log.empty() && (machine.qemu || !machine.sent.empty())) {
      const std::string path = machine_disk_path(options.sent_log, k + 1, count);
      auto wrote = write_sent_log(machine.sent, path);
      if (!wrote) keep_problem(wrote.error().message);
      // What `ett fidelity` needs beyond the sent events and the session to repeat this run's report.
      SentRun description;
      description.machine = k + 1;
      description.machines = count;
      description.disk = machine.disk;
      if (result && k < result->machines.size() && result->machines[k].session_number != 0)
        description.session = result->machines[k].session_number;
      description.guest_clock = result ? result->guest_clock : uses_guest_clock(options);
      description.offset_bounds = machine.offset_bounds;
      description.origin_tsc = machine.origin_tsc;
      auto described = write_sent_run(description, sent_run_path(path));
      if (!described) keep_problem(described.error().message);
    }
  }
  if (result && !log_problem.empty()) return make_error(ErrorKind::Io, log_problem);
  if (!result && !log_problem.empty() && progress) fmt::print(progress, "ett: also: {}\n", log_problem);
  return result;
}

}  // namespace ett::host
