// synth_command.cpp: `ett synth IMAGE --events N`: writes a realistic synthetic capture as a real trace disk.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.h"
#include "common/output_target.h"
#include "common/probe_layout.h"
#include "common/resources.h"
#include "ett/trace_format.h"
#include "image/survey_writer.h"
#include "image/synth.h"
#include "progress.h"

namespace ett::cli {

namespace {

struct SynthOptions {
  std::string image;
  uint64_t events = 0;
  uint64_t seed = 1;
  std::string layout = "2x4";
  double clock_ppm = 0;
  std::string survey;  // --survey KIND: a survey session instead of a capture
};

// `--survey fit|smis|no-probe`: a survey session (mode=survey) of a made-up PC, for trying `ett survey`.
int run_synth_survey(const SynthOptions& options) {
  using namespace ett::host;
  SurveyExample example{};
  if (!survey_example_from_name(options.survey, example))
    return report({ErrorKind::Usage, "--survey must be fit, smis or no-probe"});
  PendingFile new_disk;
  std::string target = options.image;
  if (::access(options.image.c_str(), F_OK) != 0) {
    auto pending = PendingFile::create(options.image, /*force=*/false);
    if (!pending) return report(pending.error());
    new_disk = std::move(*pending);
    ::close(new_disk.release_fd());
    ::unlink(new_disk.temporary().c_str());
    target = new_disk.temporary();
  }
  auto written = write_survey_session(target, survey_example(example));
  if (!written) return report(written.error());
  if (!new_disk.temporary().empty())
    if (auto placed = new_disk.commit(); !placed) return report(placed.error());
  std::printf("%s%s: session %u, a synthetic survey (%s)\n", options.image.c_str(),
              written->created_disk ? " (new trace disk)" : "", written->session, options.survey.c_str());
  return 0;
}

int run_synth(const SynthOptions& options) {
  using namespace ett::host;
  if (!options.survey.empty()) return run_synth_survey(options);
  if (options.events == 0) return report({ErrorKind::Usage, "--events N or --survey KIND is required"});
  const auto layout = ProbeLayout::from_name(options.layout);
  if (!layout) return report({ErrorKind::Usage, "--layout must be 2x4, 8x1, 4x2 or 1x8"});
  // The events are made in memory, then written: both checked before anything is made.
  const std::string request = fmt::format("--events {}", options.events);
  if (auto fits = check_memory(options.events * sizeof(format::EventRecord), request); !fits)
    return report(fits.error());
  const uint64_t session_bytes = format::session_sectors(options.events) * uint64_t{format::kSectorSize};
  if (auto room = check_disk_space(options.image, session_bytes, request); !room) return report(room.error());
  // A new disk is made under a temporary name and renamed into place when the session is on it: a failed or
  // interrupted synth (Ctrl-C ends the run at once) leaves no image. An existing disk is appended to.
  PendingFile new_disk;
  std::string target = options.image;
  if (::access(options.image.c_str(), F_OK) != 0) {
    auto pending = PendingFile::create(options.image, /*force=*/false);
    if (!pending) return report(pending.error());
    new_disk = std::move(*pending);
    ::close(new_disk.release_fd());
    ::unlink(new_disk.temporary().c_str());  // the disk maker creates it anew
    target = new_disk.temporary();
  }
  // A bar as load, extract and export draw while the events are made; then how long the writing takes.
  Progress bar("synth");
  bar.phase(fmt::format("generating {} events", options.events));
  std::string step_shown = "generating";
  const auto progress = [&](const char* step, uint64_t done) {
    if (step_shown == step) {
      bar.count(done, options.events);
    } else {
      step_shown = step;
      bar.phase(fmt::format("writing {} events to {}", options.events, options.image));
    }
  };
  auto written = write_synth_capture(
      target, {options.events, options.seed, layout->layout(), progress, options.clock_ppm});
  bar.erase();
  if (!written) {
    // The message names the disk the user asked for, not the temporary file it was made as.
    HostError error = written.error();
    if (const std::string& temporary = new_disk.temporary(); !temporary.empty())
      for (size_t at; (at = error.message.find(temporary)) != std::string::npos;)
        error.message.replace(at, temporary.size(), options.image);
    return report(error);
  }
  if (!new_disk.temporary().empty())
    if (auto placed = new_disk.commit(); !placed) return report(placed.error());
  const std::string clock = options.clock_ppm != 0 ? fmt::format(", clock {:+g} ppm", options.clock_ppm) : "";
  std::printf("%s%s: session %u, %llu synthetic events (seed %llu, layout %s%s)\n", options.image.c_str(),
              written->created_disk ? " (new trace disk)" : "", written->session,
              static_cast<unsigned long long>(written->events), static_cast<unsigned long long>(options.seed),
              layout->name(), clock.c_str());
  return 0;
}

}  // namespace

Command add_synth_command(CLI::App& app) {
  auto options = std::make_shared<SynthOptions>();
  CLI::App* sub =
      app.add_subcommand("synth", "Append a synthetic capture (request/response traffic) to a trace disk");
  sub->add_option("IMAGE", options->image, "Trace disk image (created, big enough, when missing)")
      ->type_name("PATH")
      ->required();
  CLI::Option* events = sub->add_option("--events", options->events, "Number of events")
                            ->type_name("N")
                            ->check(in_range(uint64_t{1}, uint64_t{1} << 34));
  sub->add_option(
         "--survey", options->survey,
         "Append a survey session (mode=survey) of a made-up PC instead of a capture: fit, smis (SMIs "
         "and hwlat gaps) or no-probe, for trying `ett survey`")
      ->type_name("fit|smis|no-probe")
      ->check(CLI::IsMember({"fit", "smis", "no-probe"}))
      ->excludes(events);
  sub->add_option("--seed", options->seed, "Random seed: the same seed gives the same events")
      ->type_name("N")
      ->capture_default_str();
  sub->add_option("--layout", options->layout, "2x4, 8x1, 4x2 or 1x8")
      ->type_name("2x4|8x1|4x2|1x8")
      ->capture_default_str();
  sub->add_option("--clock-ppm", options->clock_ppm,
                  "The same events stamped by a clock this many ppm fast (negative: slow): a second "
                  "capture of the same lines, for `ett analyze align`")
      ->type_name("PPM")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            return text.empty() || *end != '\0' || !std::isfinite(value) ? "'" + text + "' is not a number"
                                                                         : "";
          },
          "NUMBER"))
      ->check(in_range(-1000.0, 1000.0))
      ->capture_default_str();
  return {sub, [options] { return run_synth(*options); }};
}

}  // namespace ett::cli
