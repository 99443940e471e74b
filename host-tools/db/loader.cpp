// loader.cpp: image -> decoded session -> traces row + events, one transaction per session.
#include "db/loader.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>

#include "db/schema.h"
#include "image/event_source.h"
#include "image/session_stream.h"
#include "image/trace_image.h"

namespace ett::host {

namespace {

double thread_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// A session marked complete whose events can go to the database as they are decoded (SessionStream), when
// the engine takes them so and the database has no trace of that disk and session (Database::load_fed_trace):
// nullopt when it cannot, and the session is loaded whole. A complete session is usable only when every chunk
// is good, so its events number header.event_count, which the content hash covers from its start; any
// problem the scan finds abandons the load with require_usable's error (`unusable` set: --all skips it).
Expected<std::optional<LoadOutcome>> load_streamed(Database& db, const TraceImage& image, size_t index,
                                                   const LoadProgress& progress, bool& unusable) {
  const format::SessionHeader& header = image.sessions()[index];
  if (header.status != static_cast<uint32_t>(format::SessionStatus::Complete))
    return std::optional<LoadOutcome>();
  EventTallies tallies(header, header.event_count);
  SessionStream stream(image, index, [&tallies](std::span<const Event> block) { tallies.add(block); });
  const EventFeed feed = [&]() -> Expected<std::span<const Event>> {
    auto block = stream.next();
    if (!block) unusable = true;
    return block;
  };
  const Database::FedTraceRow finish = [&]() -> Expected<TraceRow> {
    if (Status usable = require_usable(image.path(), stream.summary()); !usable) {
      unusable = true;
      return usable.failure();
    }
    if (tallies.events() != header.event_count)  // every chunk was good, so this cannot be
      return make_error(ErrorKind::Io,
                        fmt::format("{}: session {} decoded {} of its {} events", image.path(),
                                    header.session_number, tallies.events(), header.event_count));
    return make_trace_row(image.label(), stream.summary(), std::move(tallies));
  };
  return db.load_fed_trace(header, header.event_count, feed, finish, progress);
}

// The seqs a salvaged load could not read, for analyses to tell a loss from a quiet period.
Status insert_losses(Database& db, int64_t trace_id, const std::vector<LostRange>& lost) {
  for (const LostRange& range : lost) {
    const SqlValue params[] = {trace_id, static_cast<int64_t>(range.first_seq),
                               static_cast<int64_t>(range.last_seq), static_cast<int64_t>(range.events()),
                               range.reason};
    ETT_TRY(db.query("INSERT INTO losses (trace_id, first_seq, last_seq, events, reason) VALUES ($1, $2, $3, "
                     "$4, $5)",
                     params));
  }
  return {};
}

}  // namespace

Expected<std::vector<LoadedSession>> load_image(Database& db, const LoadRequest& request,
                                                const SessionProgress& progress) {
  ETT_TRY_ASSIGN(TraceImage image, TraceImage::open(request.image));
  std::vector<size_t> indexes;
  if (request.all) {
    if (image.sessions().empty())
      return make_error(ErrorKind::EmptyDisk, request.image + ": the disk holds no sessions");
    for (size_t i = 0; i < image.sessions().size(); ++i) indexes.push_back(i);
  } else {
    ETT_TRY_ASSIGN(size_t index, image.find_session(request.session));
    indexes.push_back(index);
  }
  std::vector<LoadedSession> loaded;
  for (size_t index : indexes) {
    LoadedSession result;
    result.session = image.sessions()[index].session_number;
    LoadProgress on_progress;
    if (progress)
      on_progress = [&](uint64_t done, uint64_t total) { return progress(result.session, done, total); };
    auto start = std::chrono::steady_clock::now();
    double cpu_start = thread_cpu_seconds();
    auto record = [&](const LoadOutcome& outcome, uint64_t events, SessionHealth health) {
      result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      result.cpu_seconds = thread_cpu_seconds() - cpu_start;
      result.trace_id = outcome.trace_id;
      result.already_loaded = outcome.already_loaded;
      result.repaired = outcome.repaired;
      result.events = events;
      result.health = health_name(health);
      loaded.push_back(result);
    };

    // A damaged session with --salvage: its good chunks only, through the checked path below.
    std::vector<LostRange> lost;
    if (request.salvage) {
      ETT_TRY_ASSIGN(SessionSummary checked, image.check_session(index));
      lost = lost_ranges(checked);
    }
    bool unusable = false;
    auto streamed = lost.empty() ? load_streamed(db, image, index, on_progress, unusable)
                                 : Expected<std::optional<LoadOutcome>>(std::optional<LoadOutcome>());
    if (!streamed) {
      if (!request.all || !unusable) return streamed.failure();
      result.skipped = streamed.error().message;
      loaded.push_back(result);
      continue;
    }
    if (*streamed) {
      record(**streamed, image.sessions()[index].event_count, SessionHealth::Ok);
      continue;
    }

    // The other sessions: checked, counted and hashed first (the already-loaded check needs the content
    // hash), then decoded again as they are inserted (SessionEvents), in constant memory too.
    SessionEvents source(image, index);
    auto read = [&]() -> Expected<TraceRow> {
      ETT_TRY_ASSIGN(SessionSummary checked, image.check_session(index));
      ETT_TRY(require_usable(request.image, checked, request.salvage));
      EventTallies tallies(checked.header, checked.recovered_events);
      ETT_TRY(source.scan([&tallies](std::span<const Event> events) { tallies.add(events); }));
      ETT_TRY(require_usable(request.image, source.summary(), request.salvage));
      if (tallies.events() != checked.recovered_events)
        return session_changed(request.image, result.session, tallies.events(), checked.recovered_events);
      return make_trace_row(image.label(), source.summary(), std::move(tallies));
    };
    Expected<TraceRow> row = read();
    if (!row) {
      if (!request.all) return row.failure();
      result.skipped = row.error().message;
      loaded.push_back(result);
      continue;
    }
    const SessionSummary& summary = source.summary();
    start = std::chrono::steady_clock::now();  // the database part only, the counting before it
    cpu_start = thread_cpu_seconds();
    ETT_TRY_ASSIGN(LoadOutcome outcome, db.load_trace(*row, source, summary.header.capture_start_tsc,
                                                      summary.header.tsc_hz, on_progress));
    if (!outcome.already_loaded) ETT_TRY(insert_losses(db, outcome.trace_id, lost));
    record(outcome, source.size(), summary.health);
    if (!lost.empty()) loaded.back().lost = lost_ranges_text(lost);
  }
  return loaded;
}

Expected<std::vector<LoadedSession>> load_into(const std::string& url, const LoadRequest& request,
                                               const SessionProgress& progress) {
  ETT_TRY_ASSIGN(DbUrl parsed, parse_db_url(url));
  std::error_code ignored;
  const bool new_file = parsed.engine == DbEngine::Sqlite && !std::filesystem::exists(parsed.target, ignored);
  auto remove_new_file = [&] {
    if (!new_file) return;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      std::filesystem::remove(parsed.target + suffix, ignored);
  };
  auto db = open_database(url);
  if (!db) {
    remove_new_file();
    return db.failure();
  }
  auto loaded = load_image(**db, request, progress);
  db->reset();  // closed before its file may go
  bool any = false;
  if (loaded)
    for (const LoadedSession& session : *loaded) any = any || session.skipped.empty();
  if (!any) remove_new_file();
  return loaded;
}

}  // namespace ett::host
