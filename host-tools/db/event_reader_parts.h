// event_reader_parts.h: what both engines' event readers share (not for their callers): a big trace read as
// parts at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "db/event_reader.h"

namespace ett::host {

// Reads the rows of part `part` into `rows`, in seq order; calls `restart` before reading the part again from
// its start; stops handing rows on once `stop` is set.
using PartRead = std::function<Status(size_t part, const EventBatchSink& rows,
                                      const std::function<Status()>& restart, const std::atomic<bool>* stop)>;

// Reads `parts` at once: the first on this thread, each other on a thread of its own, into `sink`. The
// engines' per-row work is most of a read, so two cores take about half the wall time. The first error of
// any part is returned; the other parts stop.
Status read_parts(const std::vector<SeqRange>& parts, const PartRead& read, EventPartSink& sink);

// The seq range [first, last] cut into `count` parts of about equal size (fewer when it is small).
std::vector<SeqRange> split_range(int64_t first, int64_t last, int count);

}  // namespace ett::host
