// ls_command.cpp: `ett ls IMAGE`: the sessions on a trace disk, one line each, after checking their chunks.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "common/exit_codes.h"
#include "common/tsc_time.h"
#include "data_output.h"
#include "db/schema.h"
#include "image/trace_image.h"
#include "survey/survey.h"

namespace ett::cli {

namespace {

struct LsOptions {
  std::string image;
  bool json = false;  // the older spelling of --format json
  DataOutput out;
};

// A length the kernel measured, for the table: "40.32 ms", "6.1 us".
std::string length_text(uint64_t ticks, uint64_t hz) {
  if (hz == 0) return fmt::format("{} ticks", ticks);
  const double ns = host::ticks_to_ns(static_cast<double>(ticks), hz);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.1f} us", ns / 1e3);
}

// ls's own keys (status = ok/partial/corrupt/truncated), then every session-header field under its database
// name. A value the session does not know (no TSC rate: no duration) is null.
nlohmann::ordered_json session_json(const format::DiskLabel& label, const host::SessionSummary& summary) {
  const auto& h = summary.header;
  const uint64_t ticks =
      h.capture_end_tsc >= h.capture_start_tsc ? h.capture_end_tsc - h.capture_start_tsc : 0;
  nlohmann::ordered_json json;
  json["session"] = h.session_number;
  json["events"] = h.event_count;
  json["recovered_events"] = summary.recovered_events;
  json["good_chunks"] = summary.good_chunks;
  json["status"] = host::health_name(summary.health);
  json["detail"] = summary.describe();
  // What `extract --salvage` / `load --salvage` would lose: [[first_seq, last_seq], ...].
  nlohmann::ordered_json lost = nlohmann::ordered_json::array();
  for (const host::LostRange& range : host::lost_ranges(summary))
    lost.push_back({range.first_seq, range.last_seq});
  json["lost_seqs"] = lost;
  json["duration_ns"] = h.tsc_hz ? nlohmann::ordered_json(static_cast<uint64_t>(
                                       host::ticks_to_ns_exact(static_cast<int64_t>(ticks), h.tsc_hz)))
                                 : nlohmann::ordered_json(nullptr);
  for (const auto& [column, value] : host::session_fields(label, summary)) {
    const std::string name = column.name;
    if (name == "session" || name == "status") continue;  // ls's own keys above
    if (const auto* number = std::get_if<int64_t>(&value))
      json[name] = *number;
    else if (const auto* text = std::get_if<std::string>(&value))
      json[name] = *text;
    else
      json[name] = nullptr;
  }
  return json;
}

std::string csv_field(const nlohmann::ordered_json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// The exit status for what the check found (docs/guide/ett-command.md): a damaged session is not "ok".
// The status column: ok / partial / corrupt / truncated with its detail, and the seqs a --salvage would lose.
std::string status_text(const host::SessionSummary& summary) {
  const std::vector<host::LostRange> lost = host::lost_ranges(summary);
  if (lost.empty() || summary.recovered_events == 0) return summary.describe();
  return summary.describe() + "; lost seqs " + host::lost_ranges_text(lost);
}

int damage_status(const std::vector<host::SessionSummary>& summaries) {
  bool corrupt = false, truncated = false;
  for (const host::SessionSummary& summary : summaries) {
    corrupt = corrupt || summary.health == host::SessionHealth::Corrupt;
    truncated = truncated || summary.health == host::SessionHealth::Truncated;
  }
  return corrupt ? host::kExitBadCrc : truncated ? host::kExitTruncated : host::kExitOk;
}

// A survey session holds no chunks but a SurveyBlock: a damaged one makes the session corrupt (or truncated)
// with ett survey's own words for it.
void check_survey_block(const host::TraceImage& image, host::SessionSummary& summary) {
  if (summary.health != host::SessionHealth::Ok) return;
  auto survey = host::read_survey(image, summary.header.session_number);
  if (survey) return;
  std::string what = survey.error().message;
  const std::string prefix = fmt::format("survey session {}: ", summary.header.session_number);
  if (const size_t at = what.find(prefix); at != std::string::npos) what = what.substr(at + prefix.size());
  summary.health = survey.error().kind == host::ErrorKind::Truncated ? host::SessionHealth::Truncated
                                                                     : host::SessionHealth::Corrupt;
  summary.problems.push_back(host::SessionProblem{
      std::nullopt, summary.header.start_lba + format::sectors_before_chunks(summary.header.format_version),
      what});
}

int run_ls(LsOptions& options) {
  using namespace ett::host;
  if (options.json) options.out.format = "json";
  note_input(options.image, "the trace disk");
  auto format = data_format(options.out);
  if (!format) return report(format.error());
  if (auto free = refuse_existing_output(options.out.path, options.out.force); !free)
    return report(free.error());
  auto image = TraceImage::open(options.image);
  if (!image) return report(image.error());
  if (!image->size_warning().empty()) warn(image->size_warning());

  std::vector<SessionSummary> summaries;
  for (size_t i = 0; i < image->sessions().size(); ++i) {
    auto summary = image->check_session(i);
    if (!summary) return report(summary.error());
    if (summary->header.mode == static_cast<uint32_t>(format::CaptureMode::Survey))
      check_survey_block(*image, *summary);
    summaries.push_back(*summary);
  }
  std::string text;
  if (*format == DataFormat::Json || *format == DataFormat::Jsonl || *format == DataFormat::Csv) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const SessionSummary& summary : summaries) array.push_back(session_json(image->label(), summary));
    if (*format == DataFormat::Json) {
      text = json_array_text(array);
    } else if (*format == DataFormat::Jsonl) {
      for (const auto& object : array) text += object.dump() + "\n";
    } else {
      nlohmann::ordered_json keys = session_json(image->label(), SessionSummary{});
      std::string header;
      for (const auto& [key, value] : keys.items()) header += (header.empty() ? "" : ",") + key;
      text = header + "\n";
      for (const auto& object : array) {
        std::string line;
        for (const auto& [key, value] : object.items()) line += (line.empty() ? "" : ",") + csv_field(value);
        text += line + "\n";
      }
    }
  } else if (summaries.empty() && image->chain_problem().empty()) {
    text = fmt::format("{}: empty trace disk (no sessions)\n", options.image);
  } else {
    text = fmt::format("{:>7}  {:<19}  {:>10}  {:<12}  {:>6}  {:>13}  {:>13}  {}\n", "session",
                       "captured_at (UTC)", "events", "stop", "stalls", "longest stall", "longest check",
                       "status");
    for (const SessionSummary& summary : summaries) {
      const auto& h = summary.header;
      // Sessions before format version 2 (and synthetic ones) did not record their check intervals.
      const bool measured = h.typical_check_ticks != 0;
      // A survey session (mode=survey) has no events: `ett survey` reads what it found.
      const bool survey = h.mode == static_cast<uint32_t>(format::CaptureMode::Survey);
      text +=
          fmt::format("{:>7}  {:<19}  {:>10}  {:<12}  {:>6}  {:>13}  {:>13}  {}\n", h.session_number,
                      format_unix_time(h.captured_at_unix), survey ? "survey" : std::to_string(h.event_count),
                      format::stop_reason_name(h.stop_reason), measured ? std::to_string(h.stall_count) : "-",
                      measured && h.stall_count ? length_text(h.longest_stall_ticks, h.tsc_hz) : "-",
                      measured ? length_text(h.longest_check_ticks, h.tsc_hz) : "-", status_text(summary));
    }
  }
  auto written = emit(options.out, text);
  if (!written) return report(written.error());
  // The listing first, then one error line for the worst problem: a damaged session header is a bad CRC as
  // much as a damaged chunk (the sessions from it on are lost); an image cut short, a truncation.
  if (!image->chain_problem().empty())
    return report({ErrorKind::BadCrc, fmt::format("{}: {}; any sessions after it cannot be found",
                                                  options.image, image->chain_problem())});
  const int status = damage_status(summaries);
  if (status == kExitOk && !image->cut_short().empty())
    return report({ErrorKind::Truncated, options.image + ": image truncated: " + image->cut_short()});
  if (status != kExitOk) {
    size_t damaged = 0;
    for (const SessionSummary& summary : summaries)
      damaged += summary.health == SessionHealth::Corrupt || summary.health == SessionHealth::Truncated;
    return report(
        {status == kExitBadCrc ? ErrorKind::BadCrc : ErrorKind::Truncated,
         fmt::format("{}: {} of {} sessions {} (see the status column; extract --salvage keeps their "
                     "good chunks)",
                     options.image, damaged, summaries.size(),
                     status == kExitBadCrc ? "damaged" : "truncated")});
  }
  return kExitOk;
}

}  // namespace

Command add_ls_command(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  CLI::App* sub = app.add_subcommand("ls", "List the sessions on a trace disk and check every chunk");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")
      ->type_name("PATH")
      ->required();
  add_data_output(sub, options->out, {"text", "csv", "json", "jsonl"});
  sub->add_flag("--json", options->json, "Same as --format json");
  sub->footer(
      "Status: ok, partial (dump cut off; recovered/expected events), corrupt (which chunk), truncated (the\n"
      "image ends inside the session). Every session is listed first; the exit status then says the worst:\n"
      "0 every session ok or partial, 1 usage or I/O error, 10 not a trace disk, 11 unknown format version,\n"
      "12 bad CRC (label, a session header, or a corrupt session), 13 a truncated session. A serial log of "
      "dump=serial is "
      "read\n"
      "like a disk.");
  return {sub, [options] { return run_ls(*options); }};
}

}  // namespace ett::cli
