// ls_command.cpp: `ett ls IMAGE`: the sessions on a trace disk, one line each, after checking their chunks.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "common/tsc_time.h"
#include "db/schema.h"
#include "image/trace_image.h"

namespace ett::cli {

namespace {

struct LsOptions {
  std::string image;
  bool json = false;
};

// ls's own keys (status = ok/partial/corrupt), then every session-header field under its database name.
std::string session_json(const format::DiskLabel& label, const host::SessionSummary& summary) {
  const auto& h = summary.header;
  const uint64_t ticks =
      h.capture_end_tsc >= h.capture_start_tsc ? h.capture_end_tsc - h.capture_start_tsc : 0;
  const uint64_t duration_ns =
      h.tsc_hz ? static_cast<uint64_t>(host::ticks_to_ns_exact(static_cast<int64_t>(ticks), h.tsc_hz)) : 0;
  std::string json = fmt::format(
      "{{\"session\":{},\"events\":{},\"recovered_events\":{},\"good_chunks\":{},\"status\":{},"
      "\"detail\":{},\"duration_ns\":{}",
      h.session_number, h.event_count, summary.recovered_events, summary.good_chunks,
      json_escape(host::health_name(summary.health)), json_escape(summary.describe()), duration_ns);
  for (const auto& [column, value] : host::session_fields(label, summary)) {
    const std::string_view name = column.name;
    if (name == "session" || name == "status") continue;  // ls's own keys above
    json += fmt::format(",\"{}\":", name);
    if (const auto* number = std::get_if<int64_t>(&value))
      json += std::to_string(*number);
    else if (const auto* text = std::get_if<std::string>(&value))
      json += json_escape(*text);
    else
      json += "null";
  }
  return json + "}";
}

int run_ls(const LsOptions& options) {
  using namespace ett::host;
  auto image = TraceImage::open(options.image);
  if (!image) return report(image.error());
  if (!image->size_warning().empty()) warn(image->size_warning());

  std::vector<SessionSummary> summaries;
  for (size_t i = 0; i < image->sessions().size(); ++i) {
    auto summary = image->check_session(i);
    if (!summary) return report(summary.error());
    summaries.push_back(*summary);
  }
  if (options.json) {
    fmt::print("[");
    for (size_t i = 0; i < summaries.size(); ++i)
      fmt::print("{}\n  {}", i ? "," : "", session_json(image->label(), summaries[i]));
    fmt::print("{}]\n", summaries.empty() ? "" : "\n");
  } else if (summaries.empty() && image->chain_problem().empty()) {
    fmt::print("{}: empty trace disk (no sessions)\n", options.image);
  } else {
    fmt::print("{:>7}  {:<19}  {:>10}  {:<12}  {}\n", "session", "captured_at (UTC)", "events", "stop",
               "status");
    for (const SessionSummary& summary : summaries)
      fmt::print("{:>7}  {:<19}  {:>10}  {:<12}  {}\n", summary.header.session_number,
                 format_unix_time(summary.header.captured_at_unix), summary.header.event_count,
                 format::stop_reason_name(summary.header.stop_reason), summary.describe());
  }
  if (!image->chain_problem().empty())
    warn(fmt::format("{}: {}; any sessions after it cannot be found", options.image, image->chain_problem()));
  std::fflush(stdout);
  return 0;
}

}  // namespace

Command add_ls_command(CLI::App& app) {
  auto options = std::make_shared<LsOptions>();
  CLI::App* sub = app.add_subcommand("ls", "List the sessions on a trace disk and check every chunk");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")->required();
  sub->add_flag("--json", options->json, "Print a JSON array of sessions");
  sub->footer(
      "Status: ok, partial (dump cut off; recovered/expected events), corrupt (which chunk), truncated.\n"
      "Exit status: 0 listed, 1 usage or I/O error, 10 not a trace disk, 11 unknown format version, 12 bad\n"
      "label CRC, 13 truncated image. A serial log of dump=serial is read like a disk.");
  return {sub, [options] { return run_ls(*options); }};
}

}  // namespace ett::cli
