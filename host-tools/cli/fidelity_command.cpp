// fidelity_command.cpp: `ett fidelity IMAGE --sent-log SENT.csv`: the fidelity report of an `ett qemu run`
// recomputed after the run, from its trace disk and the sent log (with the .run.json beside it).
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "commands.h"
#include "data_output.h"
#include "ett/trace_format.h"
#include "fidelity_output.h"
#include "harness/runner.h"
#include "harness/sent_log.h"
#include "image/trace_image.h"

namespace ett::cli {

namespace {

struct FidelityOptions {
  std::string image;
  std::string sent_log;
  std::optional<uint32_t> session;
  unsigned machines = 1;
  bool check = false;
  double tolerance_us = host::kDefaultToleranceUs;
  DataOutput out;
};

// One machine's files, read and paired as the run did.
struct MachineInput {
  host::MachineFidelity fidelity;
  host::CaptureClock clock;
  bool guest_clock = false;
};

// The sent log's .run.json, or (a log written before it existed, or copied without it) what the log itself
// tells: the guest clock from its guest_tsc_due column, and no offset bounds.
host::Expected<host::SentRun> run_description(const std::string& sent_log, const host::SentLog& log) {
  const std::string path = host::sent_run_path(sent_log);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    warn(
        fmt::format("{}: not found: the guest/host TSC offset is estimated from the codes alone (right only "
                    "when nothing was lost), and --session defaults to the newest",
                    path));
    host::SentRun run;
    for (const host::SentEvent& event : log.events)
      run.guest_clock = run.guest_clock || event.guest_tsc_due != 0;
    return run;
  }
  return host::read_sent_run(path);
}

host::Expected<MachineInput> assess(const FidelityOptions& options, unsigned machine) {
  using namespace ett::host;
  const std::string disk = machine_disk_path(options.image, machine, options.machines);
  const std::string sent_path = machine_disk_path(options.sent_log, machine, options.machines);
  ETT_TRY_ASSIGN(SentLog log, read_sent_log(sent_path));
  ETT_TRY_ASSIGN(SentRun run, run_description(sent_path, log));
  ETT_TRY_ASSIGN(TraceImage image, TraceImage::open(disk));
  if (!image.size_warning().empty()) warn(image.size_warning());
  ETT_TRY_ASSIGN(size_t index, image.find_session(options.session ? options.session : run.session));
  ETT_TRY_ASSIGN(SessionData data, image.read_session(index));
  ETT_TRY(require_usable(disk, data.summary));
  const format::SessionHeader& header = data.summary.header;
  if (header.mode != static_cast<uint32_t>(format::CaptureMode::Capture))
    return make_error(ErrorKind::Usage,
                      fmt::format("{}: session {} was not a capture (mode={}): no probe events to compare",
                                  disk, header.session_number, format::mode_name(header.mode)));
  if (data.summary.health == SessionHealth::Partial)
    warn(fmt::format(
        "{}: session {} is partial (its dump was cut off): the events not recovered count as lost", disk,
        header.session_number));
  MachineInput input;
  input.guest_clock = run.guest_clock;
  FidelityReport report = assess_fidelity(
      log.events, data.events,
      CaptureWindow{header.tsc_hz, header.capture_end_tsc, run.offset_bounds, run.guest_clock});
  if (!log.held_ns_known && report.held_back > 0)
    report.held_back_max_ns = std::numeric_limits<double>::quiet_NaN();
  input.clock = CaptureClock{header.tsc_hz, header.capture_start_tsc, run.origin_tsc, report.offset_ticks};
  input.fidelity = MachineFidelity{
      disk, header.session_number, log.events.size(), header.event_count, std::move(report), std::nullopt};
  return input;
}

int run_fidelity(const FidelityOptions& options) {
  host::note_input(options.image, "the trace disk");
  host::note_input(options.sent_log, "the sent log");
  auto format = data_format(options.out);
  if (!format) return report(format.error());
  if (auto free = host::refuse_existing_output(options.out.path, options.out.force); !free)
    return report(free.error());
  std::vector<MachineInput> inputs;
  for (unsigned k = 1; k <= options.machines; ++k) {
    auto input = assess(options, k);
    if (!input) return report(input.error());
    inputs.push_back(std::move(*input));
  }
  // Machines 2..N against machine 1, as `ett qemu run --machines N` printed them.
  std::vector<host::MachineFidelity> machines;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k > 0 && inputs[0].clock.tsc_hz != 0 && inputs[k].clock.tsc_hz != 0)
      inputs[k].fidelity.truth =
          host::alignment_truth(inputs[0].clock, inputs[k].clock, inputs[0].guest_clock);
    machines.push_back(inputs[k].fidelity);
  }
  auto written = emit(options.out, render_fidelity(machines, *format));
  if (!written) return report(written.error());
  return options.check ? fidelity_check_status(machines, options.tolerance_us) : 0;
}

}  // namespace

Command add_fidelity_command(CLI::App& app) {
  auto options = std::make_shared<FidelityOptions>();
  CLI::App* sub = app.add_subcommand(
      "fidelity",
      "Compare a capture of `ett qemu run` with what its injector sent (the run's fidelity report, again)");
  sub->add_option("IMAGE", options->image, "The run's trace disk (--disk)")->type_name("PATH")->required();
  sub->add_option("--sent-log", options->sent_log,
                  "The run's --sent-log CSV (its .run.json beside it gives the offset bounds and the clock)")
      ->type_name("CSV")
      ->required();
  sub->add_option("--session", options->session, "Session number (default: the run's, from the .run.json)")
      ->type_name("N");
  sub->add_option(
         "--machines", options->machines,
         "The run's --machines N: IMAGE and the sent log name machine 1..N's files as `ett qemu run` "
         "numbered them (trace-1.img, sent-1.csv, ...); one report per machine")
      ->type_name("N")
      ->capture_default_str()
      ->check(in_range(1, 8));
  add_fidelity_check_options(sub, options->check, options->tolerance_us, "");
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->footer(
      "The same report as `ett qemu run` printed (text), or one row/object per machine (csv, json, jsonl; "
      "the\n"
      "JSON of --fidelity-json; null where nothing was measured).\n"
      "Exit status: 0 ok, 1 bad usage or input (no sent log, a column missing), 6 (--check) an event was\n"
      "lost, unexpected or out of order, or the timing error exceeds --tolerance, 10-15 as `ett extract`.");
  return {sub, [options] { return run_fidelity(*options); }};
}

}  // namespace ett::cli
