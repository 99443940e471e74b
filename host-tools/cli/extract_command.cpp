// extract_command.cpp: `ett extract IMAGE`: one session's events as CSV or JSON Lines.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "common/units.h"
#include "image/event_writer.h"
#include "image/trace_image.h"

namespace ett::cli {

namespace {

struct ExtractOptions {
  std::string image;
  std::string format = "csv";
  std::string output;
  std::string cpu_hz;
  std::optional<uint32_t> session;
  bool force = false;
};

int run_extract(const ExtractOptions& options) {
  using namespace ett::host;
  const auto format = event_format_from_name(options.format);
  if (!format) return report({ErrorKind::Usage, "--format must be csv or jsonl"});
  std::optional<uint64_t> cpu_hz;
  if (!options.cpu_hz.empty()) {
    auto hz = parse_hz(options.cpu_hz);
    if (!hz) return report(hz.error());
    cpu_hz = *hz;
  }
  const bool to_stdout = options.output.empty() || options.output == "-";
  if (!to_stdout && !options.force && ::access(options.output.c_str(), F_OK) == 0)
    return report({ErrorKind::Usage, options.output + ": already exists; use --force to overwrite it"});

  auto image = TraceImage::open(options.image);
  if (!image) return report(image.error());
  if (!image->size_warning().empty()) warn(image->size_warning());
  auto index = image->find_session(options.session);
  if (!index) return report(index.error());
  auto data = image->read_session(*index);
  if (!data) return report(data.error());
  const SessionSummary& summary = data->summary;
  auto usable = require_usable(options.image, summary);
  if (!usable) return report(usable.error());
  const uint32_t number = summary.header.session_number;
  if (summary.health == SessionHealth::Partial)
    warn(
        fmt::format("session {} is partial (its dump was cut off): extracting the {} of {} events recovered "
                    "from {} of {} chunks",
                    number, summary.recovered_events, summary.expected_events, summary.good_chunks,
                    summary.header.chunk_count));
  const EventTiming timing{summary.header.capture_start_tsc, cpu_hz ? *cpu_hz : summary.header.tsc_hz};
  if (timing.hz == 0)
    return report(
        {ErrorKind::Usage, fmt::format("session {} has no TSC frequency: give one with --cpu-hz", number)});

  if (to_stdout) {
    auto wrote = write_events(data->events, *format, timing, stdout, "standard output");
    return wrote ? 0 : report(wrote.error());
  }
  // A file this run created is removed again when writing it fails; anything that existed before (a file
  // overwritten with --force, a device, a pipe) is left where it is.
  bool created = true;
  int fd = ::open(options.output.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST && options.force) {
    created = false;
    fd = ::open(options.output.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  }
  if (fd < 0) return report({ErrorKind::Io, errno_message(options.output, errno)});
  std::FILE* out = ::fdopen(fd, "w");
  if (!out) {
    ::close(fd);
    return report({ErrorKind::Io, errno_message(options.output, errno)});
  }
  auto wrote = write_events(data->events, *format, timing, out, options.output);
  const bool closed = std::fclose(out) == 0;
  if (!wrote || !closed) {
    const HostError error =
        wrote ? HostError{ErrorKind::Io, errno_message(options.output + ": write failed", errno)}
              : wrote.error();
    if (created) ::unlink(options.output.c_str());
    return report(error);
  }
  note(fmt::format("wrote {} events of session {} to {}", data->events.size(), number, options.output));
  return 0;
}

}  // namespace

Command add_extract_command(CLI::App& app) {
  auto options = std::make_shared<ExtractOptions>();
  CLI::App* sub = app.add_subcommand("extract", "Write one session's events as CSV or JSON Lines");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")->required();
  sub->add_option("--format", options->format,
                  "csv (seq,probe,code,tsc,time_ns) or jsonl (same keys plus lines)")
      ->check(CLI::IsMember({"csv", "jsonl"}))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output,
                  "Write to FILE instead of standard output (- is standard output)");
  sub->add_option("--cpu-hz", options->cpu_hz,
                  "TSC frequency for time_ns (default: the session's calibrated "
                  "tsc_hz), e.g. 2.4G");
  sub->add_option("--session", options->session, "Session number (default: the newest)");
  sub->add_flag("--force", options->force, "Overwrite an existing output file");
  sub->footer(
      "A partial session (dump cut off) is extracted with a warning. A serial log of dump=serial is read\n"
      "like a disk. Exit status: 0 ok, 1 usage or I/O error, 10 not a trace disk, 11 unknown format "
      "version,\n"
      "12 bad CRC, 13 truncated image, 14 empty disk, 15 no such session.");
  return {sub, [options] { return run_extract(*options); }};
}

}  // namespace ett::cli
