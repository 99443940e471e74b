// event_reader_parts.h: what both engines' event readers share (not for their callers): a big trace read as
// two parts at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "db/event_reader.h"

namespace ett::host {

// Reads the rows of a part of the trace into `sink`, in seq order; stops handing them on once `stop` is set.
using PartRead = std::function<Status(const EventBatchSink& sink, const std::atomic<bool>* stop)>;

// A big trace read as two parts at once (two connections, two server-side workers): `upper` on a second
// thread into memory (about `upper_rows` rows) while `lower` hands its rows straight to `sink` on this one;
// then the upper rows follow. The engines' per-row work is most of a read, so two cores take about half the
// wall time. The first error of either part is returned; the other part stops.
Status read_in_two_parts(const PartRead& lower, const PartRead& upper, int64_t upper_rows,
                         const EventBatchSink& sink);

}  // namespace ett::host
