// signal_command.cpp: `ett signal URL PROBE CODE`: one libettprobe signal, for shell scripts under --run.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "ettprobe.h"

namespace ett::cli {

namespace {

struct SignalOptions {
  std::string url;
  int probe = 0;
  int code = 0;
};

int run_signal(const SignalOptions& options) {
  ett_probe* probe = ett_probe_open(options.url.c_str());
  if (!probe) return report({host::ErrorKind::Usage, ett_probe_last_error()});
  const bool sent = ett_probe_signal(probe, options.probe, options.code) == 0;
  const std::string problem = sent ? "" : ett_probe_last_error();
  const bool closed = ett_probe_close(probe) == 0;
  if (!sent) return report({host::ErrorKind::Usage, problem});
  if (!closed) return report({host::ErrorKind::Io, ett_probe_last_error()});
  return 0;
}

}  // namespace

Command add_signal_command(CLI::App& app) {
  auto options = std::make_shared<SignalOptions>();
  CLI::App* sub = app.add_subcommand(
      "signal",
      "Put CODE on PROBE's lines of the probe cable URL (libettprobe), e.g. under `ett qemu run --run`");
  sub->add_option("url", options->url,
                  "shm:PATH (the virtual probe: \"$ETT_PROBE_URL\" under --run) or ppdev:/dev/parportN, "
                  "with optional ?layout=2x4|8x1|4x2|1x8&log=FILE&pace=1|0")
      ->type_name("URL")
      ->required();
  sub->add_option("probe", options->probe, "Probe number, from 1")->type_name("PROBE")->required();
  sub->add_option("code", options->code, "The code to show (0-15 under 2x4)")->type_name("CODE")->required();
  sub->footer(
      "Waits (at most 1 s) until the capture kernel has polled since the previous write, so that "
      "consecutive\n"
      "signals are never merged. Exit status: 0 ok, 1 bad URL, probe or code (or the probe already shows\n"
      "CODE), or the cable could not be opened or written.");
  return {sub, [options] { return run_signal(*options); }};
}

}  // namespace ett::cli
