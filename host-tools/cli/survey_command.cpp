// survey_command.cpp: `ett survey IMAGE`: what a PC offers for measuring, from the survey session its boot
// with mode=survey wrote, and a verdict per probe candidate.
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "common/exit_codes.h"
#include "image/trace_image.h"
#include "survey/survey.h"

namespace ett::cli {

namespace {

struct SurveyOptions {
  std::string image;
  std::optional<uint32_t> session;
  std::string format = "text";
};

int run_survey(const SurveyOptions& options) {
  using namespace ett::host;
  auto image = TraceImage::open(options.image);
  if (!image) return report(image.error());
  if (!image->size_warning().empty()) warn(image->size_warning());
  auto survey = read_survey(*image, options.session);
  if (!survey) return report(survey.error());
  const std::string text =
      options.format == "json" ? survey_json(*survey).dump(2) + "\n" : survey_text(*survey, options.image);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

Command add_survey_command(CLI::App& app) {
  auto options = std::make_shared<SurveyOptions>();
  CLI::App* sub = app.add_subcommand(
      "survey", "Say what a PC offers for measuring, from its mode=survey session, with a verdict per probe");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")
      ->type_name("PATH")
      ->required();
  sub->add_option("--session", options->session, "Survey session number (default: the newest survey)")
      ->type_name("N");
  sub->add_option("--format", options->format, "Output format")
      ->type_name("text|json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->footer(
      "Exit status: 0 the report was printed (fit or not), 1 usage or I/O error, 10 not a trace disk, 11 "
      "unknown\n"
      "format or survey block version, 12 bad CRC (a damaged survey block), 13 truncated image, 14 no "
      "survey\n"
      "session on the disk, 15 --session N names no survey session.");
  return {sub, [options] { return run_survey(*options); }};
}

}  // namespace ett::cli
