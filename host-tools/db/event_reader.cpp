// event_reader.cpp: what both engines' event readers share: a big trace read as two parts at once.
#include <algorithm>
#include <thread>
#include <vector>

#include "db/event_reader_parts.h"

namespace ett::host {

Status read_in_two_parts(const PartRead& lower, const PartRead& upper, int64_t upper_rows,
                         const EventBatchSink& sink) {
  std::vector<EventRow> rows;
  rows.reserve(static_cast<size_t>(std::clamp<int64_t>(upper_rows, 0, int64_t{1} << 27)));
  std::atomic<bool> stop = false;
  Status upper_read;
  std::thread reader([&] {
    upper_read = upper(
        [&](std::span<const EventRow> batch) -> Status {
          rows.insert(rows.end(), batch.begin(), batch.end());
          return {};
        },
        &stop);
  });
  Status lower_read = lower(sink, nullptr);
  if (!lower_read) stop = true;
  reader.join();
  if (!lower_read) return lower_read;
  if (!upper_read) return upper_read;
  for (size_t begin = 0; begin < rows.size(); begin += kEventBatchRows)
    ETT_TRY(
        sink(std::span<const EventRow>(rows).subspan(begin, std::min(kEventBatchRows, rows.size() - begin))));
  return {};
}

}  // namespace ett::host
