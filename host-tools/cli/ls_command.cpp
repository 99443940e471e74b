// ls_command.cpp: `ett ls IMAGE`: the sessions on a trace disk, one line each, after checking their chunks.
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "trace_image.h"

namespace ett::cli {

namespace {

struct LsOptions {
  std::string image;
  bool json = false;
};

std::string session_json(const host::SessionSummary& summary) {
  const auto& h = summary.header;
  const uint64_t ticks =
      h.capture_end_tsc >= h.capture_start_tsc ? h.capture_end_tsc - h.capture_start_tsc : 0;
  const uint64_t duration_ns =
      h.tsc_hz ? static_cast<uint64_t>(static_cast<long double>(ticks) * 1e9L / h.tsc_hz + 0.5L) : 0;
  return fmt::format(
      "{{\"session\":{},\"start_lba\":{},\"captured_at_unix\":{},\"captured_at\":{},\"events\":{},"
      "\"recovered_events\":{},\"chunks\":{},\"good_chunks\":{},\"stop_reason\":{},\"status\":{},\"detail\":{"
      "},"
      "\"layout\":{},\"probe_source\":{},\"mode\":{},\"tsc_hz\":{},\"duration_ns\":{}}}",
      h.session_number, h.start_lba, h.captured_at_unix,
      h.captured_at_unix ? json_escape(format_unix_time(h.captured_at_unix)) : "null", h.event_count,
      summary.recovered_events, h.chunk_count, summary.good_chunks,
      json_escape(format::stop_reason_name(h.stop_reason)), json_escape(host::health_name(summary.health)),
      json_escape(summary.describe()), json_escape(format::layout_name(h.layout)),
      json_escape(format::probe_source_name(h.probe_source)), json_escape(format::mode_name(h.mode)),
      h.tsc_hz, duration_ns);
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
      fmt::print("{}\n  {}", i ? "," : "", session_json(summaries[i]));
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
