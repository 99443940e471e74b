// streamed_events.h: what the tests of the streaming writers share: a capture of 600,000 events (more than
// two of their blocks, EventsWrittenBehind), actions over it, and a feed of its events in batches of odd
// sizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "analysis/capture.h"
#include "analysis/durations.h"

namespace ett::test {

// Events from `first_ns` on (before 0: from before the capture start), probes 1-3 and one on probe 9 (past
// any layout), codes 0-15.
inline std::vector<host::AnalysisEvent> streamed_events(double first_ns, uint64_t seed) {
  std::vector<host::AnalysisEvent> events;
  std::mt19937_64 random(seed);
  double time = first_ns;
  for (uint64_t seq = 0; seq < 600'000; ++seq) {
    const auto probe = static_cast<uint8_t>(seq == 444'444 ? 9 : 1 + random() % 3);
    const auto code = static_cast<uint8_t>(random() % 16);
    events.push_back({seq, probe, code, static_cast<uint8_t>(code * 3), 1000 + seq * 11, time});
    time += static_cast<double>(random() % 4000) / 7;
  }
  return events;
}

// An action from every seventh event to the fifth after it.
inline std::vector<host::ActionEnds> streamed_actions(std::span<const host::AnalysisEvent> events) {
  std::vector<host::ActionEnds> ends;
  for (size_t i = 0; i + 5 < events.size(); i += 7) {
    const host::AnalysisEvent &start = events[i], &end = events[i + 5];
    ends.push_back({start.seq, end.seq, start.time_ns, end.time_ns, start.code, end.code});
  }
  return ends;
}

// Hands `events` to writer.add in batches of 1, 2, 4095, 300,000 and 7 events, then of 4096; with `ends` (in
// end seq order), each batch with the actions that end in it, as `ett export` hands them over.
template <typename Writer>
void add_in_batches(Writer& writer, std::span<const host::AnalysisEvent> events,
                    std::span<const host::ActionEnds> ends = {}) {
  size_t at = 0, action = 0;
  auto add = [&](size_t size) {
    const std::span<const host::AnalysisEvent> batch = events.subspan(at, size);
    size_t end = action;
    while (end < ends.size() && ends[end].end_seq <= batch.back().seq) ++end;
    if constexpr (requires { writer.add(batch, ends); })
      writer.add(batch, ends.subspan(action, end - action));
    else
      writer.add(batch);
    at += size;
    action = end;
  };
  for (size_t size : {size_t{1}, size_t{2}, size_t{4095}, size_t{300'000}, size_t{7}}) add(size);
  for (; at < events.size();) add(std::min<size_t>(4096, events.size() - at));
}

}  // namespace ett::test
