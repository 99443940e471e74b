// loader.cpp: image -> decoded session -> traces row + events, one transaction per session.
#include "db/loader.h"

#include <sys/resource.h>

#include <chrono>

#include "db/schema.h"
#include "image/trace_image.h"

namespace ett::host {

namespace {

double thread_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
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
    auto data = image.read_session(index);
    if (!data) {
      if (!request.all) return data.failure();
      result.skipped = data.error().message;
      loaded.push_back(result);
      continue;
    }
    auto usable = require_usable(request.image, data->summary);
    if (!usable) {
      if (!request.all) return usable.failure();
      result.skipped = usable.error().message;
      loaded.push_back(result);
      continue;
    }
    const SessionSummary& summary = data->summary;
    const TraceRow row = make_trace_row(image.label(), summary, data->events);
    LoadProgress on_progress;
    if (progress)
      on_progress = [&](uint64_t done, uint64_t total) { return progress(result.session, done, total); };
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    ETT_TRY_ASSIGN(LoadOutcome outcome, db.load_trace(row, data->events, summary.header.capture_start_tsc,
                                                      summary.header.tsc_hz, on_progress));
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.cpu_seconds = thread_cpu_seconds() - cpu_start;
    result.trace_id = outcome.trace_id;
    result.already_loaded = outcome.already_loaded;
    result.events = data->events.size();
    result.health = health_name(summary.health);
    loaded.push_back(result);
  }
  return loaded;
}

}  // namespace ett::host
