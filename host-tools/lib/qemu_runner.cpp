// qemu_runner.cpp: one `ett qemu run`: disk, shared memory, QEMU, boot handshake, playback, stop, verdict.
#include "qemu_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "disk_maker.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"
#include "injector.h"
#include "live_command.h"
#include "probe_layout.h"
#include "qemu_process.h"
#include "scenario.h"
#include "shared_memory.h"
#include "trace_image.h"

namespace ett::host {

namespace {

using vprobe::Control;
using vprobe::KernelState;

constexpr uint64_t kPollNs = 1'000'000;
constexpr uint64_t kSettleNs = 20'000'000;  // after the last write, before Stop: let the kernel see it
constexpr uint64_t kFailedExitGraceNs = 10'000'000'000;  // a Failed kernel should leave QEMU by itself

std::atomic<bool> g_interrupted{false};

extern "C" void on_terminate_signal(int) {
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

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
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

std::vector<std::string> qemu_command(const RunOptions& options, const std::string& kernel,
                                      const std::string& shm_path) {
  std::vector<std::string> argv = {options.qemu, "-M",      "pc",       "-accel",    "tcg",
                                   "-m",         "256",     "-display", "none",      "-monitor",
                                   "none",       "-serial", "stdio",    "-no-reboot"};
  argv.insert(argv.end(),
              {"-object", "memory-backend-file,id=shm0,mem-path=" + shm_path + ",size=1M,share=on", "-device",
               "ivshmem-plain,memdev=shm0"});
  argv.insert(argv.end(), {"-drive", "file=" + options.disk + ",format=raw,if=ide,index=0"});
  argv.insert(argv.end(), {"-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"});
  if (!options.iso.empty()) {
    argv.insert(argv.end(), {"-cdrom", options.iso, "-boot", "d"});
  } else {
    std::string append = "exit=qemu";
    for (const std::string& word : split_words(options.append))
      if (word != "exit=qemu") append += " " + word;
    argv.insert(argv.end(), {"-kernel", kernel, "-append", append});
  }
  return argv;
}

Status check_file(const std::string& path, const std::string& what, const std::string& hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(ErrorKind::Usage, fmt::format("{} {}: {}{}", what, path, std::strerror(errno), hint));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    return make_error(ErrorKind::Usage, fmt::format("{} {} is not a file", what, path));
  return {};
}

// Everything that outlives the run proper: the outer function writes the logs from it whatever happened.
struct RunState {
  std::unique_ptr<QemuProcess> qemu;
  std::vector<SentEvent> sent;
};

// --- live mode (--run CMD) ---

enum class LiveEnd { CommandExited, Interrupted, QemuExited, KernelLeftCapturing, Timeout };

// Runs the --run command while the kernel captures: it signals through libettprobe (ETT_PROBE_URL), which
// paces each write on the kernel's heartbeat and logs it (ETT_PROBE_LOG). Returns how the wait ended; the
// command's signals become the run's sent events, in host-TSC order.
Expected<LiveEnd> run_live_command(const RunOptions& options, const SharedMemoryFile& shm,
                                   const ProbeLayout& layout, QemuProcess& qemu, std::optional<int> cpu,
                                   uint64_t deadline, RunReport& report, RunState& state) {
  report.live = true;
  report.paced = !options.free_run;
  ETT_TRY_ASSIGN(TemporaryFile log, TemporaryFile::create());
  const std::vector<std::string> environment = {fmt::format("ETT_PROBE_URL=shm:{}?layout={}{}", shm.path(),
                                                            layout.name(), options.free_run ? "&pace=0" : ""),
                                                fmt::format("ETT_PROBE_LAYOUT={}", layout.name()),
                                                "ETT_PROBE_LOG=" + log.path()};
  // The command gets the injector's CPU: QEMU's vCPU thread keeps its own CPU, as with a scenario.
  ETT_TRY_ASSIGN(LiveCommand command, LiveCommand::start(options.run_command, environment, cpu));
  Control* control = shm.control();
  LiveEnd end = LiveEnd::CommandExited;
  for (;;) {
    if (std::optional<int> status = command.poll()) {
      report.command_failure = command_failure(*status);
      break;
    }
    if (g_interrupted.load())
      end = LiveEnd::Interrupted;
    else if (qemu.poll())
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
  report.playback_ns = monotonic_ns() - command.start_ns();
  ETT_TRY_ASSIGN(state.sent, read_signal_log(log.path(), command.start_ns()));
  report.events_sent = report.scenario_events = state.sent.size();
  return end;
}

Expected<RunReport> run(const RunOptions& options, std::FILE* progress, RunState& state) {
  const uint64_t run_start = monotonic_ns();
  const uint64_t deadline = run_start + static_cast<uint64_t>(options.timeout_s * 1e9);
  RunReport report;

  // --- options and inputs ---
  if (!options.kernel.empty() && !options.iso.empty())
    return make_error(ErrorKind::Usage, "give either --kernel or --iso, not both");
  if (!options.iso.empty() && options.append_given)
    return make_error(ErrorKind::Usage,
                      "--append does not apply to --iso: the GRUB menu's QEMU entry sets the "
                      "kernel arguments");
  if (options.timeout_s <= 0 || options.boot_timeout_s <= 0)
    return make_error(ErrorKind::Usage, "timeouts must be positive");
  const bool live = !options.run_command.empty();
  if (live == !options.scenario.empty())
    return make_error(ErrorKind::Usage, "give either --scenario FILE or --run CMD (one of them, not both)");
  std::string kernel = options.kernel;
  if (options.iso.empty()) {
    if (kernel.empty()) kernel = default_kernel_path();
    auto found = check_file(kernel, "kernel",
                            options.kernel.empty() ? " (build it, or give --kernel ELF or --iso ISO)" : "");
    if (!found) return found.failure();
  } else {
    auto found = check_file(options.iso, "ISO", "");
    if (!found) return found.failure();
  }
  ProbeLayout layout;
  for (const std::string& word : split_words(options.append)) {
    if (!word.starts_with("layout=")) continue;
    auto parsed = ProbeLayout::from_name(word.substr(7));
    if (!parsed)
      return make_error(
          ErrorKind::Usage,
          fmt::format("--append: unknown layout '{}' (use 2x4, 8x1, 4x2 or 1x8)", word.substr(7)));
    layout = *parsed;
  }
  Scenario scenario;
  scenario.initial_lines = options.initial_lines;
  if (!live) {
    ETT_TRY_ASSIGN(scenario, load_scenario(options.scenario, layout, options.initial_lines));
  }
  report.scenario_events = scenario.events.size();

  // --- the trace disk ---
  std::error_code exists_error;
  if (!std::filesystem::exists(options.disk, exists_error)) {
    MakeDiskOptions make;
    make.path = options.disk;
    make.name = "ett qemu run";
    auto made = make_disk(make);
    if (!made) return made.failure();
    report.disk_created = true;
    if (progress)
      fmt::print(progress, "ett: created trace disk {} ({} MiB)\n", options.disk, kDefaultDiskBytes >> 20);
  }
  // An existing disk is not checked here: the kernel reads its label and refuses a disk that is not a trace
  // disk, and the boot tests exercise exactly that refusal.

  // --- shared memory and QEMU ---
  ETT_TRY_ASSIGN(SharedMemoryFile shm, SharedMemoryFile::create(vprobe::kMinSize));
  *shm.lines() = scenario.initial_lines;
  Control* control = shm.control();
  // The injector gets a CPU of its own; QEMU runs on the others.
  const std::optional<int> injector_cpu = choose_injector_cpu();
  ETT_TRY_ASSIGN(state.qemu, QemuProcess::start(qemu_command(options, kernel, shm.path()),
                                                options.verbose ? stdout : nullptr, injector_cpu));
  QemuProcess& qemu = *state.qemu;
  const uint64_t qemu_start = monotonic_ns();
  const uint64_t boot_deadline =
      std::min(deadline, qemu_start + static_cast<uint64_t>(options.boot_timeout_s * 1e9));

  auto interrupted = [&]() -> Status {
    qemu.kill_and_wait();
    return make_error(ErrorKind::Interrupted, "interrupted: QEMU stopped, temporary files removed");
  };
  // A kernel in state Failed exits through isa-debug-exit; give it a moment, then judge by what it printed.
  auto wait_for_failed_kernel = [&](const char* phase) -> HostError {
    const uint64_t until = monotonic_ns() + kFailedExitGraceNs;
    while (!qemu.poll() && monotonic_ns() < until) sleep_ns(kPollNs);
    return failure_after_exit(qemu.poll() ? *qemu.poll() : qemu.kill_and_wait(), qemu, phase);
  };

  // --- boot: wait for the kernel to find the probe and start capturing ---
  for (;;) {
    if (g_interrupted.load()) return interrupted().failure();
    if (kernel_found_probe(control)) {
      if (!live) shm.unlink();  // QEMU has it mapped: the name is no longer needed (--run: the command's URL)
      KernelState kernel_state = state_of(control);
      if (kernel_state == KernelState::Capturing) break;
      if (kernel_state == KernelState::Failed)
        return ett::Failure<HostError>{wait_for_failed_kernel("booting")};
    }
    if (auto exit = qemu.poll()) {
      // A short run (a tiny buffer, a short limit=) can capture, dump and exit between two of our polls.
      if (kernel_found_probe(control) && state_of(control) == KernelState::Done) break;
      return ett::Failure<HostError>{failure_after_exit(*exit, qemu, "booting")};
    }
    if (monotonic_ns() >= boot_deadline) {
      qemu.kill_and_wait();
      return make_error(
          ErrorKind::Timeout,
          fmt::format("timeout in the boot phase: the kernel did not start capturing within {} "
                      "(kernel state: {}); {}",
                      seconds(boot_deadline - qemu_start),
                      kernel_found_probe(control) ? state_name(state_of(control)) : "probe not found",
                      serial_hint(qemu)));
    }
    sleep_ns(kPollNs);
  }
  report.boot_ns = monotonic_ns() - qemu_start;
  report.tsc_hz = load(control->tsc_hz);

  std::optional<QemuExit> exit = qemu.poll();
  if (exit) {
    report.kernel_stopped_early = true;  // it finished before the scenario could start
  } else if (live) {
    // --- capture: the --run command signals through libettprobe ---
    ETT_TRY_ASSIGN(LiveEnd end,
                   run_live_command(options, shm, layout, qemu, injector_cpu, deadline, report, state));
    switch (end) {
      case LiveEnd::CommandExited:
        break;
      case LiveEnd::Interrupted:
        return interrupted().failure();
      case LiveEnd::QemuExited:
        return ett::Failure<HostError>{
            failure_after_exit(*qemu.poll(), qemu, "the --run command was running")};
      case LiveEnd::Timeout:
        qemu.kill_and_wait();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("timeout in the capture phase: the --run command was still running after "
                        "{} (it was stopped); raise --timeout",
                        seconds(static_cast<uint64_t>(options.timeout_s * 1e9))));
      case LiveEnd::KernelLeftCapturing:
        report.kernel_stopped_early = true;
        if (state_of(control) == KernelState::Failed)
          return ett::Failure<HostError>{wait_for_failed_kernel("the --run command was running")};
        if (progress)
          fmt::print(
              progress,
              "ett: warning: the kernel stopped capturing (reason: {}) while the --run command was running; "
              "the command was stopped\n",
              format::stop_reason_name(load(control->stop_reason)));
        break;
    }
  } else {
    // --- capture: play the scenario ---
    enum class Abort { None, Interrupted, QemuExited, KernelLeftCapturing, Timeout } abort = Abort::None;
    auto keep_going = [&] {
      if (g_interrupted.load())
        abort = Abort::Interrupted;
      else if (qemu.poll())
        abort = Abort::QemuExited;
      else if (state_of(control) != KernelState::Capturing)
        abort = Abort::KernelLeftCapturing;
      else if (monotonic_ns() >= deadline)
        abort = Abort::Timeout;
      return abort == Abort::None;
    };
    report.paced = !options.free_run;
    PlayResult played = play_scenario(scenario, shm.lines(), keep_going, injector_cpu,
                                      options.free_run ? nullptr : &control->heartbeat);
    report.paced_writes = played.paced_writes;
    state.sent = played.sent;
    report.events_sent = played.sent.size();
    report.playback_ns = played.duration_ns;
    report.realtime = played.realtime;
    switch (abort) {
      case Abort::None:
        break;
      case Abort::Interrupted:
        return interrupted().failure();
      case Abort::QemuExited:
        return ett::Failure<HostError>{failure_after_exit(*qemu.poll(), qemu, "the scenario was playing")};
      case Abort::Timeout:
        qemu.kill_and_wait();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("timeout in the capture phase: the scenario was still playing after {} ({} of "
                        "{} events sent); raise --timeout",
                        seconds(static_cast<uint64_t>(options.timeout_s * 1e9)), played.sent.size(),
                        scenario.events.size()));
      case Abort::KernelLeftCapturing:
        report.kernel_stopped_early = true;
        if (state_of(control) == KernelState::Failed)
          return ett::Failure<HostError>{wait_for_failed_kernel("the scenario was playing")};
        if (progress)
          fmt::print(progress,
                     "ett: warning: the kernel stopped capturing (reason: {}) after {} of {} events were "
                     "sent; the rest were not sent\n",
                     format::stop_reason_name(load(control->stop_reason)), played.sent.size(),
                     scenario.events.size());
        break;
    }
    std::vector<uint64_t> late;
    for (const SentEvent& event : played.sent)
      late.push_back(event.sent_ns - std::min(event.sent_ns, event.scheduled_ns));
    if (!late.empty()) {
      std::sort(late.begin(), late.end());
      report.max_late_ns = late.back();
      report.median_late_ns = late[late.size() / 2];
    }
  }
  if (!exit) {
    // --- stop and dump ---
    sleep_ns(kSettleNs);
    std::atomic_ref<uint32_t>(control->command)
        .store(static_cast<uint32_t>(vprobe::HostCommand::Stop), std::memory_order_release);
    const uint64_t stop_sent = monotonic_ns();
    for (;;) {
      if (g_interrupted.load()) return interrupted().failure();
      if ((exit = qemu.poll())) break;
      if (monotonic_ns() >= deadline) {
        const KernelState kernel_state = state_of(control);
        qemu.kill_and_wait();
        return make_error(
            ErrorKind::Timeout,
            fmt::format("timeout in the dump phase: QEMU did not exit within {} of the stop command "
                        "(--timeout {} s; kernel state: {}); {}",
                        seconds(monotonic_ns() - stop_sent), options.timeout_s, state_name(kernel_state),
                        serial_hint(qemu)));
      }
      sleep_ns(kPollNs);
    }
  }
  report.total_ns = monotonic_ns() - qemu_start;

  // --- verdict ---
  const bool success_status = exit->exited && exit->status == vprobe::qemu_status_for(vprobe::kExitSuccess);
  const bool ok_line = !find_line_starting(qemu.serial(), "ETT: RESULT OK").empty();
  const bool done = kernel_found_probe(control) && state_of(control) == KernelState::Done;
  if (!(success_status && ok_line && done))
    return ett::Failure<HostError>{failure_after_exit(*exit, qemu, "dumping")};
  report.kernel_events = load(control->event_count);
  report.session_number = load(control->session_number);
  report.stop_reason = load(control->stop_reason);

  // The kernel says it wrote the session: check that the disk agrees (dump=serial and dump=none leave the
  // disk alone; the serial log holds a dump=serial session).
  for (const std::string& word : split_words(options.append))
    if (word == "dump=serial" || word == "dump=none") return report;
  auto image = TraceImage::open(options.disk);
  if (!image) return make_error(ErrorKind::KernelFailure, "after the run: " + image.error().message);
  auto index = image->find_session(report.session_number);
  if (!index)
    return make_error(
        ErrorKind::KernelFailure,
        "the kernel reported success, but the disk does not hold its session: " + index.error().message);
  auto summary = image->check_session(*index);
  if (!summary) return summary.failure();
  if (summary->health != SessionHealth::Ok)
    return make_error(ErrorKind::KernelFailure,
                      fmt::format("the kernel reported success, but session {} on {} is {}",
                                  report.session_number, options.disk, summary->describe()));
  return report;
}

}  // namespace

std::string default_kernel_path() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "ett-kernel.elf";
  return (self.parent_path() / "ett-kernel.elf").string();
}

Expected<RunReport> run_qemu(const RunOptions& options, std::FILE* progress) {
  SignalGuard signals;
  RunState state;
  auto result = run(options, progress, state);
  if (state.qemu) state.qemu->kill_and_wait();  // no-op when it has exited

  // The logs are written whatever happened: they are what explains a failure.
  std::string log_problem;
  if (!options.serial_log.empty() && state.qemu) {
    std::FILE* file = std::fopen(options.serial_log.c_str(), "w");
    const std::string serial = state.qemu->serial();
    if (!file || std::fwrite(serial.data(), 1, serial.size(), file) != serial.size())
      log_problem = errno_message(options.serial_log, errno);
    if (file && std::fclose(file) != 0 && log_problem.empty())
      log_problem = errno_message(options.serial_log, errno);
  }
  if (!options.sent_log.empty() && (state.qemu || !state.sent.empty())) {
    auto wrote = write_sent_log(state.sent, options.sent_log);
    if (!wrote && log_problem.empty()) log_problem = wrote.error().message;
  }
  if (result && !log_problem.empty()) return make_error(ErrorKind::Io, log_problem);
  if (!result && !log_problem.empty() && progress) fmt::print(progress, "ett: also: {}\n", log_problem);
  return result;
}

}  // namespace ett::host
