// extract_command.cpp: `ett extract IMAGE`: one session's events as CSV, JSON, JSON Lines or a table.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "common/line_names.h"
#include "common/units.h"
#include "common/write_behind.h"
#include "data_output.h"
#include "image/event_source.h"
#include "image/event_writer.h"
#include "image/session_stream.h"
#include "image/trace_image.h"
#include "progress.h"

namespace ett::cli {

namespace {

struct ExtractOptions {
  std::string image;
  DataOutput out;  // --format csv|text|json|jsonl, -o FILE, --force
  std::string cpu_hz;
  std::optional<uint32_t> session;
  bool salvage = false;
};

int run_extract(const ExtractOptions& options) {
  using namespace ett::host;
  note_input(options.image, "the trace disk");
  auto checked = data_format(options.out);
  if (!checked) return report(checked.error());
  const auto format = event_format_from_name(options.out.format);
  if (!format) return report({ErrorKind::Usage, "--format '" + options.out.format + "'"});
  std::optional<uint64_t> cpu_hz;
  if (!options.cpu_hz.empty()) {
    auto hz = parse_hz(options.cpu_hz);
    if (!hz) return report(hz.error());
    cpu_hz = *hz;
  }
  const std::string& output = options.out.path;
  const bool to_stdout = cli::to_stdout(options.out);
  if (auto free = refuse_existing_output(output, options.out.force); !free) return report(free.error());
  // Reading a big session takes seconds, and writing it more; Ctrl-C ends the run at once and removes the
  // temporary file it was writing.
  Progress bar("extract");
  if (to_stdout) bar.data_to_stdout();
  bar.phase("reading " + options.image);

  auto image = TraceImage::open(options.image);
  if (!image) return report(image.error());
  if (!image->size_warning().empty()) warn(image->size_warning());
  auto index = image->find_session(options.session);
  if (!index) return report(index.error());
  // Checked first (whether it is usable, what a partial one holds), then decoded a block at a time as it is
  // written: a session of any size in constant memory, the decoding on a thread of its own.
  auto checked_session = image->check_session(*index);
  if (!checked_session) return report(checked_session.error());
  const SessionSummary& summary = *checked_session;
  auto usable = require_usable(options.image, summary, options.salvage);
  if (!usable) return report(usable.error());
  const uint32_t number = summary.header.session_number;
  if (options.salvage && summary.health != SessionHealth::Ok) {
    // What was asked for: the good chunks' events, and exactly which seqs are missing.
    const std::vector<LostRange> lost = lost_ranges(summary);
    warn(fmt::format("session {} is {}: salvaging the {} of {} events of its good chunks; lost seqs {}",
                     number, summary.describe(), summary.recovered_events, summary.expected_events,
                     lost_ranges_text(lost)));
    if (summary.header.format_version >= 2 && summary.stalls.empty() && summary.header.stall_records > 0)
      warn(fmt::format("session {}: its stall table is damaged: the capture's stalls are unknown", number));
  } else if (summary.health == SessionHealth::Partial)
    warn(
        fmt::format("session {} is partial (its dump was cut off): extracting the {} of {} events recovered "
                    "from {} of {} chunks",
                    number, summary.recovered_events, summary.expected_events, summary.good_chunks,
                    summary.header.chunk_count));
  const EventTiming timing{summary.header.capture_start_tsc, cpu_hz ? *cpu_hz : summary.header.tsc_hz};
  if (timing.hz == 0)
    return report(
        {ErrorKind::Usage, fmt::format("session {} has no TSC frequency: give one with --cpu-hz", number)});

  // A serial port's session says which events are the edges of a pulse shorter than the poll step.
  const bool with_flags = is_serial_source(summary.header.probe_source);
  bar.phase(fmt::format("writing session {}", number));
  const uint64_t total = summary.recovered_events;
  const EventFeed feed =
      checked_feed(std::make_shared<SessionStream>(*image, *index), total, options.image, number);
  const WriteProgress progress = [&bar, total](uint64_t done) {
    bar.count(done, total);
    return true;
  };
  if (to_stdout) {
    auto wrote = write_events(feed, *format, timing, stdout, "standard output", progress, with_flags);
    bar.erase();
    return wrote ? 0 : report(wrote.error());
  }
  // A regular file is written under a temporary name beside it and renamed into place when complete
  // (output_target.h): a failed or interrupted extract leaves an earlier file as it was. A device or a pipe
  // is written in place.
  PendingFile pending;
  int fd = -1;
  if (written_in_place(output)) {
    fd = ::open(output.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return report({ErrorKind::Io, errno_message(output, errno)});
  } else {
    auto created = PendingFile::create(output, options.out.force);
    if (!created) return report(created.error());
    pending = std::move(*created);
    fd = pending.release_fd();
  }
  bar.watch_file(pending.temporary().empty() ? output : pending.temporary());
  std::FILE* out = ::fdopen(fd, "w");
  if (!out) {
    ::close(fd);
    return report({ErrorKind::Io, errno_message(output, errno)});
  }
  // Written behind as every output file of `ett` (TextOut): what lies more than 64 MB behind the end goes to
  // the disk and out of the page cache. Where the stream is now (what stdio still buffers included) is near
  // enough.
  auto behind = std::make_unique<WriteBehind>(fd);
  const WriteProgress file_progress = [&](uint64_t done) {
    if (const off_t at = ::ftello(out); at > 0) behind->wrote(static_cast<uint64_t>(at));
    return progress(done);
  };
  auto wrote = write_events(feed, *format, timing, out, output, file_progress, with_flags);
  behind.reset();  // its thread stops before the descriptor closes
  const bool closed = std::fclose(out) == 0;
  if (!wrote || !closed) {
    const HostError error =
        wrote ? HostError{ErrorKind::Io, errno_message(output + ": write failed", errno)} : wrote.error();
    pending.discard();
    return report(error);
  }
  if (!pending.temporary().empty())
    if (auto placed = pending.commit(); !placed) return report(placed.error());
  bar.erase();
  note(fmt::format("wrote {} events of session {} to {}", total, number, output));
  return 0;
}

}  // namespace

Command add_extract_command(CLI::App& app) {
  auto options = std::make_shared<ExtractOptions>();
  CLI::App* sub =
      app.add_subcommand("extract", "Write one session's events as CSV, JSON, JSON Lines or a table");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")
      ->type_name("PATH")
      ->required();
  options->out.format = "csv";
  add_data_output(sub, options->out, {"csv", "text", "json", "jsonl"});
  sub->add_option("--cpu-hz", options->cpu_hz,
                  "TSC frequency for time_ns (default: the session's calibrated "
                  "tsc_hz), e.g. 2.4G")
      ->type_name("HZ");
  sub->add_option("--session", options->session, "Session number (default: the newest)")->type_name("N");
  sub->add_flag("--salvage", options->salvage,
                "Extract a damaged session's good chunks (skip those that fail their CRC) and say which seqs "
                "were lost");
  sub->footer(
      "Columns: seq,probe,code,tsc,time_ns (csv); json, jsonl and text add lines (D7..D0). A session\n"
      "from a serial port (probe=uart: D0..D3 = DCD, DSR, CTS, RI) adds flags: short-pulse marks both\n"
      "edges of a pulse shorter than the poll step (their times and its width unknown). A partial\n"
      "session (dump cut off) is extracted with a warning. A serial log of dump=serial is read like a disk.\n"
      "Ctrl-C removes the file it was writing. Exit status: 0 ok, 1 usage or I/O error, 10 not a trace "
      "disk,\n"
      "11 unknown format version, 12 bad CRC, 13 truncated image, 14 empty disk, 15 no such session,\n"
      "130 interrupted.");
  return {sub, [options] { return run_extract(*options); }};
}

}  // namespace ett::cli
