// qemu_run_command.cpp: `ett qemu run`: capture a scenario with the real kernel under QEMU (TCG).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "commands.h"
#include "common/line_names.h"
#include "data_output.h"
#include "ett/trace_format.h"
#include "export/output_file.h"
#include "fidelity_output.h"
#include "harness/qemu_command.h"
#include "harness/runner.h"

namespace ett::cli {

namespace {

std::string milliseconds(uint64_t ns) {
  return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
}
std::string microseconds(uint64_t ns) {
  return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
}

// "in 52.4 ms of host time, 50.0 ms on the guest's clock (its TSC at the kernel's 1000.000 MHz; QEMU -icount:
// the guest's clock ran at up to 4.47x host time": the playback's host time (CLOCK_MONOTONIC), its span on
// the guest's TSC converted at the rate the kernel calibrated, and the fastest rate the injector saw the
// guest's clock run at (guest_rate is in guest ticks per host ns).
std::string guest_playback_text(const host::RunReport& r) {
  const double ghz = static_cast<double>(r.tsc_hz) / 1e9;
  const std::string span = r.guest_playback_ns && r.tsc_hz > 0
                               ? fmt::format("{} on the guest's clock (its TSC at the kernel's {:.3f} MHz; ",
                                             milliseconds(*r.guest_playback_ns), ghz * 1e3)
                               : std::string("its span on the guest's clock unknown (");
  const std::string rate =
      r.tsc_hz > 0 && r.guest_rate > 0
          ? fmt::format("QEMU -icount: the guest's clock ran at up to {:.2f}x host time", r.guest_rate / ghz)
          : std::string("QEMU -icount");
  return fmt::format("in {} of host time, {}{}", milliseconds(r.playback_ns), span, rate);
}

// --run: the command's own failure, distinct from the run's (1-4, 130).
constexpr int kCommandFailedStatus = 5;

void print_live_summary(const host::RunReport& r) {
  fmt::print("  signals:        {} by the --run command in {} of host time ({}; {})\n", r.events_sent,
             milliseconds(r.playback_ns),
             r.command_terminated ? "stopped when the kernel stopped"
                                  : (r.command_failure.empty() ? "exit status 0" : r.command_failure),
             r.paced ? "each waited for a kernel poll" : "--free-run: unpaced");
}

struct QemuRunOptions {
  host::RunOptions run;
  unsigned initial_lines = 0;
  unsigned sync_probe = 0;
  bool check = false;
  double tolerance_us = host::kDefaultToleranceUs;
  std::string clock = "guest";
  std::string fidelity_json;
  DataOutput fidelity_out;  // --fidelity-out FILE, --fidelity-format, --force
  std::string pps_line;
};

// Per machine: what its capture kept of what was sent, and against the scenario's timeline.
std::vector<host::MachineFidelity> machine_fidelity(const host::RunReport& r) {
  std::vector<host::MachineFidelity> machines;
  for (const host::MachineResult& machine : r.machines) {
    host::MachineFidelity fidelity{machine.disk,          machine.session_number, machine.events_sent,
                                   machine.kernel_events, machine.fidelity,       std::nullopt};
    if (machine.truth_offset_ns)
      fidelity.truth = host::AlignmentTruth{*machine.truth_offset_ns, *machine.truth_drift_ppm};
    machines.push_back(std::move(fidelity));
  }
  return machines;
}

// --fidelity-json FILE (always JSON, written over an existing file as it always was) and --fidelity-out FILE
// in --fidelity-format (the data output convention: never over an existing file without --force).
void write_fidelity_files(const std::vector<host::MachineFidelity>& machines, const QemuRunOptions& options) {
  if (!options.fidelity_json.empty()) {
    auto wrote = host::write_output(options.fidelity_json, host::machines_document(machines).dump() + "\n",
                                    /*force=*/true);
    if (!wrote) warn(wrote.error().message);
  }
  if (!options.fidelity_out.path.empty()) {
    auto wrote = emit(options.fidelity_out, render_fidelity(machines, *data_format(options.fidelity_out)));
    if (!wrote) warn(wrote.error().message);
  }
}

int run_qemu_run(QemuRunOptions& options, const CLI::App& sub) {
  options.run.append_given = sub.count("--append") > 0;
  // `ett qemu run` puts exit=qemu first itself: QEMU has to end when the kernel is done for the run to end.
  for (const std::string& word : host::split_words(options.run.append))
    if (word.rfind("exit=", 0) == 0 && word != "exit=qemu")
      return report(
          {host::ErrorKind::Usage, "--append " + word +
                                       ": `ett qemu run` sets exit=qemu itself (QEMU must exit when the "
                                       "kernel is done); leave exit= out"});
  // The files the run writes are checked before it: a refusal after minutes of capture would lose them.
  host::note_input(options.run.disk, "the trace disk");
  host::note_input(options.run.scenario, "the scenario");
  host::note_input(options.run.kernel, "the kernel");
  host::note_input(options.run.iso, "the ISO");
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--serial-log", &options.run.serial_log},
      {"--sent-log", &options.run.sent_log},
      {"--fidelity-json", &options.fidelity_json},
      {"--fidelity-out", &options.fidelity_out.path}};
  for (const auto& [option, path] : outputs)
    if (auto refused = host::refuse_output_on_input(*path, option); !refused) return report(refused.error());
  if (!options.fidelity_out.path.empty()) {
    auto format = data_format(options.fidelity_out);
    if (!format) return report(format.error());
    if (!to_stdout(options.fidelity_out) && !options.fidelity_out.force &&
        ::access(options.fidelity_out.path.c_str(), F_OK) == 0)
      return report({host::ErrorKind::Usage, "--fidelity-out " + options.fidelity_out.path +
                                                 ": already exists; use --force to overwrite it"});
  }
  options.run.initial_lines = static_cast<uint8_t>(options.initial_lines);
  options.run.sync_probe = static_cast<uint8_t>(options.sync_probe);
  options.run.guest_clock = options.clock == "guest";
  if (!options.pps_line.empty()) {
    // The harness drives QEMU's ivshmem lines: D0..D7 (a serial port's names are refused by name).
    auto line = host::parse_line_name(options.pps_line, static_cast<uint32_t>(format::ProbeSource::Ivshmem),
                                      host::ProbeLayout(), "--pps-line");
    if (!line) return report(line.error());
    options.run.pps_line = *line;
  }
  // OVMF alone takes 5-20 s to reach GRUB under TCG.
  if (options.run.firmware == host::Firmware::Uefi && sub.count("--boot-timeout") == 0)
    options.run.boot_timeout_s = 120;
  auto result = host::run_qemu(options.run, quiet() ? nullptr : stderr);
  if (!result) return report(result.error());
  const host::RunReport& r = *result;
  fmt::print("ett: run {}\n", r.command_failure.empty() ? "OK" : "captured, but the --run command failed");
  if (r.live)
    print_live_summary(r);
  else if (r.guest_clock)
    fmt::print("  events sent:    {} of {} {}; injector {})\n", r.events_sent, r.scenario_events,
               guest_playback_text(r), r.realtime ? "SCHED_FIFO" : "normal priority");
  else
    fmt::print("  events sent:    {} of {} in {} of host time (lateness: median {}, max {}; {})\n",
               r.events_sent, r.scenario_events, milliseconds(r.playback_ns), microseconds(r.median_late_ns),
               microseconds(r.max_late_ns), r.realtime ? "SCHED_FIFO" : "normal priority");
  if (r.paced && !r.live)
    fmt::print("  pacing:         {} write(s) held back until the kernel had polled, by up to {}\n",
               r.paced_writes, microseconds(r.held_back_max_ns));
  fmt::print("  kernel events:  {}{}\n", r.kernel_events,
             r.kernel_events == r.events_sent ? "" : " (differs from the events sent)");
  fmt::print("  session:        {} on {} (stop: {}, TSC {:.3f} MHz)\n", r.session_number,
             r.machines.empty() ? options.run.disk : r.machines.front().disk,
             format::stop_reason_name(r.stop_reason), static_cast<double>(r.tsc_hz) / 1e6);
  fmt::print("  duration:       {} total (boot to capturing {})\n", milliseconds(r.total_ns),
             milliseconds(r.boot_ns));
  if (r.pps_line >= 0 && !r.machines.empty())
    fmt::print("  pps:            D{}, {} pulses at whole seconds of {} (truth: utc_ns in the sent log)\n",
               r.pps_line, r.machines.front().pps_pulses,
               r.guest_clock ? "the guest's UTC (its TSC mapped linearly from the host's CLOCK_REALTIME)"
                             : "the host's CLOCK_REALTIME");
  const std::vector<host::MachineFidelity> machines = machine_fidelity(r);
  fmt::print("{}", host::format_machines(machines));
  write_fidelity_files(machines, options);
  if (r.kernel_stopped_early)
    warn(r.live ? "the kernel stopped capturing before the --run command ended"
                : "the kernel stopped capturing before the scenario ended");
  if (!r.command_failure.empty()) {
    fmt::print(stderr,
               "ett: the --run command failed ({}); the capture was stopped and dumped all the same\n",
               r.command_failure);
    return kCommandFailedStatus;
  }
  return options.check ? fidelity_check_status(machines, options.tolerance_us) : 0;
}

}  // namespace

Command add_qemu_run_command(CLI::App& app) {
  auto options = std::make_shared<QemuRunOptions>();
  CLI::App* qemu = app.add_subcommand("qemu", "Run the capture kernel under QEMU");
  qemu->require_subcommand(1);
  CLI::App* sub = qemu->add_subcommand(
      "run",
      "Boot the kernel under QEMU (TCG), play a scenario (or run a command that signals) into the virtual "
      "probe, stop and dump to --disk");
  auto& run = options->run;
  sub->add_option("--disk", run.disk, "Trace disk image (made as a 64 MiB trace disk when missing)")
      ->type_name("IMAGE")
      ->required();
  auto* scenario =
      sub->add_option("--scenario", run.scenario, "Scenario file: '<time_us> <probe> <code>' per line")
          ->type_name("FILE");
  sub->add_option("--run", run.run_command,
                  "Live mode instead of a scenario: run CMD with /bin/sh once the kernel captures, with "
                  "ETT_PROBE_URL (the virtual probe for libettprobe / `ett signal`) in its environment; "
                  "stop the capture when CMD exits")
      ->type_name("CMD")
      ->excludes(scenario);
  auto* kernel =
      sub->add_option("--kernel", run.kernel, "Multiboot kernel ELF (default: ett-kernel.elf next to ett)")
          ->type_name("ELF");
  sub->add_option("--iso", run.iso, "Boot this GRUB ISO instead (its QEMU menu entry sets the arguments)")
      ->type_name("ISO")
      ->excludes(kernel);
  sub->add_option(
         "--firmware", run.firmware,
         "bios (SeaBIOS) or uefi (OVMF from Debian's ovmf package; boots only --iso; the boot timeout "
         "defaults to 120 s)")
      ->type_name("bios|uefi")  // the choices are the placeholder: the validators' own lists are blanked
      ->transform(CLI::CheckedTransformer(std::map<std::string, host::Firmware>{
                                              {"bios", host::Firmware::Bios}, {"uefi", host::Firmware::Uefi}})
                      .description(""))
      ->option_text("bios|uefi (default: bios)");
  sub->add_option("--append", run.append,
                  "Kernel arguments after 'exit=qemu', e.g. \"layout=8x1\" (not with --iso)")
      ->type_name("ARGS");
  sub->add_option("--timeout", run.timeout_s, "Seconds for the whole run; QEMU is killed after")
      ->type_name("S")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--boot-timeout", run.boot_timeout_s, "Seconds until the kernel starts capturing")
      ->type_name("S")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--initial-lines", options->initial_lines, "Line byte D7..D0 before the scenario (0-255)")
      ->type_name("N")
      ->capture_default_str()
      ->check(in_range(0, 255));
  sub->add_option(
         "--sent-log", run.sent_log,
         "Write CSV index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,"
         "guest_tsc_before,held_back,utc_ns,pps_edge,pps_second,held_ns (utc_ns: the write's true UTC, ns "
         "since "
         "1970; held_ns: how long pacing held the write back)")
      ->type_name("CSV");
  sub->add_option("--serial-log", run.serial_log, "Save the guest's serial output to FILE")
      ->type_name("FILE");
  sub->add_flag(
      "--free-run", run.free_run,
      "Write on the scenario's clock alone (--run: ETT_PROBE_URL gets pace=0); by default each write waits "
      "until the kernel has polled since the previous one, so that an emulator stall delays events instead "
      "of merging them");
  add_fidelity_check_options(sub, options->check, options->tolerance_us, " (the fidelity report)");
  sub->add_option("--clock", options->clock,
                  "guest: QEMU runs with -icount and the scenario plays on the guest's clock (keeps the "
                  "scenario's intervals on a busy host); host: plain TCG, writes on the host's clock (--run "
                  "always uses the host's)")
      ->type_name("guest|host")
      ->capture_default_str()
      ->check(CLI::IsMember({"guest", "host"}).description(""));
  sub->add_option("--fidelity-json", options->fidelity_json,
                  "Write the fidelity report as a JSON array (one object per machine) to FILE")
      ->type_name("FILE");
  options->fidelity_out.format = "json";
  options->fidelity_out.allowed = {"text", "csv", "json", "jsonl"};
  sub->add_option("--fidelity-out", options->fidelity_out.path,
                  "Write the fidelity report to FILE (- is standard output) in --fidelity-format, as `ett "
                  "fidelity` does")
      ->type_name("FILE");
  sub->add_option("--fidelity-format", options->fidelity_out.format, "text, csv, json or jsonl")
      ->type_name("text|csv|json|jsonl")
      ->capture_default_str();
  sub->add_flag("--force", options->fidelity_out.force, "Overwrite an existing --fidelity-out file");
  sub->add_option("--machines", run.machines,
                  "Start N kernels, each with its own QEMU, probe and disk (DISK with -1..-N before the "
                  "extension); the scenario goes to machine 1, the sync edges and PPS pulses to all")
      ->type_name("N")
      ->capture_default_str()
      ->check(in_range(1, 8));
  sub->add_option("--sync-probe", options->sync_probe,
                  "Probe that receives the shared sync edges (toggling its lowest line) on every machine")
      ->type_name("PROBE")
      ->check(in_range(1, 8));
  sub->add_option("--sync-period", run.sync_period_us, "Microseconds between sync edges")
      ->type_name("US")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--pps-line", options->pps_line,
                  "Dn: drive that data line as a GPS receiver's pulse-per-second on every machine (high for "
                  "100 ms from each whole second of UTC; the truth goes to the sent log)")
      ->type_name("Dn");
  sub->add_option("--pps-jitter-ns", run.pps_jitter_ns,
                  "Standard deviation of the modelled receiver's jitter on each pulse, ns")
      ->type_name("NS")
      ->capture_default_str()
      ->check(in_range(0.0, 100e6));
  sub->add_option("--pps-seed", run.pps_seed, "Seed of the jitter (machine K uses SEED + K - 1)")
      ->type_name("N")
      ->capture_default_str();
  sub->add_option("--memory", run.memory_mb, "Each QEMU's RAM in MiB (-m)")
      ->type_name("MB")
      ->capture_default_str()
      ->check(in_range(16, 65536));  // above 4096: RAM above 4 GiB, for the x86-64 kernel
  sub->add_option("--machine", run.machine,
                  "QEMU machine: pc (i440FX, PIIX3 IDE) or q35 (ICH9, its built-in AHCI controller)")
      ->type_name("pc|q35")
      ->capture_default_str()
      ->check(CLI::IsMember({"pc", "q35"}).description(""));
  sub->add_option_function<std::string>(
         "--disk-interface",
         [&run](const std::string& name) { run.disk_interface = *host::parse_disk_interface(name); },
         "Where the trace disk is attached: ide (primary master; a PIIX3 controller on q35), ahci (port 0; "
         "an AHCI "
         "controller on pc) or nvme (an NVMe controller) [default: ide]")
      ->type_name("ide|ahci|nvme")
      ->check(CLI::IsMember({"ide", "ahci", "nvme"}).description(""));
  sub->add_flag("--verbose", run.verbose, "Copy the guest's serial output to standard output as it arrives");
  sub->add_option("--qemu", run.qemu, "QEMU binary")->type_name("PATH")->capture_default_str();
  sub->footer(
      "Success needs QEMU exit status 33, an 'ETT: RESULT OK' serial line and the kernel in state Done.\n"
      "Exit status: 0 ok, 1 bad usage or input, 2 the kernel reported a failure, 3 timeout (boot, capture "
      "or\n"
      "dump phase), 4 QEMU failed to start or exited unexpectedly, 5 the --run command failed (the capture\n"
      "is dumped all the same), 6 (--check) an event was lost, unexpected or out of order, or the timing\n"
      "error exceeds --tolerance, 130 interrupted.");
  return {sub, [options, sub] { return run_qemu_run(*options, *sub); }};
}

}  // namespace ett::cli
