// durations.cpp: pairs start and end events into actions (the rule is in the header).
#include "analysis/durations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "common/huge_pages.h"

namespace ett::host {

namespace {

bool parse_number(std::string_view text, unsigned max, unsigned& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out <= max;
}

bool is_endpoint(const AnalysisEvent& event, const Endpoint& endpoint) {
  return event.probe == endpoint.probe && (!endpoint.code || *endpoint.code == event.code);
}

}  // namespace

Expected<Endpoint> parse_endpoint(std::string_view text) {
  Endpoint endpoint;
  const size_t colon = text.find(':');
  unsigned probe = 0, code = 0;
  if (!parse_number(text.substr(0, colon), 8, probe) || probe == 0)
    return make_error(ErrorKind::Usage,
                      fmt::format("'{}': expected PROBE or PROBE:CODE (probe 1-8, code 0-255)", text));
  endpoint.probe = static_cast<uint8_t>(probe);
  if (colon != std::string_view::npos) {
    if (!parse_number(text.substr(colon + 1), 255, code))
      return make_error(ErrorKind::Usage, fmt::format("'{}': the code after ':' must be 0-255", text));
    endpoint.code = static_cast<uint8_t>(code);
  }
  return endpoint;
}

std::string endpoint_text(const Endpoint& endpoint) {
  return endpoint.code ? fmt::format("{}:{}", endpoint.probe, *endpoint.code)
                       : fmt::format("{}", endpoint.probe);
}

Expected<PairRule> parse_pair_rule(std::string_view text) {
  if (text == "same-code") return PairRule::SameCode;
  if (text == "fifo") return PairRule::Fifo;
  return make_error(ErrorKind::Usage, fmt::format("--pair '{}': expected same-code or fifo", text));
}

Expected<DurationsResult> pair_actions(std::span<const AnalysisEvent> events, const Endpoint& from,
                                       const Endpoint& to, double pi_ns, PairRule rule) {
  if (from.probe == to.probe && (!from.code || !to.code || *from.code == *to.code))
    return make_error(ErrorKind::Usage,
                      fmt::format("--from {} and --to {} select the same events: give different probes, or "
                                  "different codes on one probe",
                                  endpoint_text(from), endpoint_text(to)));
  DurationsResult result;
  result.from = from;
  result.to = to;
  result.pi_ns = pi_ns;
  // Open starts, oldest first: every start in order with a closed flag (the oldest open one is found by
  // skipping closed ones from `oldest`), and per code a queue of the open ones, linked through the starts
  // themselves, so that finding the oldest open start with a code is O(1) however many starts stay open (a
  // linear scan was quadratic when many never close). A start keeps what its action needs: closing one reads
  // one place in memory, not the start's event far back in the capture.
  constexpr uint32_t kNone = UINT32_MAX;
  struct Start {
    uint64_t seq;
    double time_ns;
    uint32_t next_same_code;  // the next open start with its code (kNone: none yet)
    uint8_t code;
    bool closed;
  };
  std::vector<Start> starts;
  struct Queue {
    uint32_t head = kNone, tail = kNone;
  };
  std::array<Queue, 256> open_by_code;
  size_t oldest = 0;
  auto oldest_open = [&] {
    while (oldest < starts.size() && starts[oldest].closed) ++oldest;
    return oldest;
  };
  // Drops the closed starts before the oldest open one once they are half of all, so that the starts held are
  // about the open ones (at 10 M events every start held cost 24 bytes of fresh memory). Every index in use
  // (a queue's ends, a start's next) is at or after `oldest` and moves down with it.
  constexpr size_t kCompactFrom = 1 << 16;
  auto compact = [&] {
    if (oldest < kCompactFrom || oldest < starts.size() / 2) return;
    const auto shift = static_cast<uint32_t>(oldest);
    auto moved = [shift](uint32_t& index) {
      if (index != kNone) index -= shift;
    };
    starts.erase(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(oldest));
    for (Start& start : starts) moved(start.next_same_code);
    for (Queue& queue : open_by_code) {
      moved(queue.head);
      moved(queue.tail);
    }
    oldest = 0;
  };
  const bool same_code = !to.code && rule == PairRule::SameCode;
  // Sized once from a count of the endpoints: at 10 M events a doubling vector of actions held its old and
  // new copies (hundreds of MB) at once.
  size_t ends = 0, begins = 0;
  for (const AnalysisEvent& event : events) {
    if (is_endpoint(event, to))
      ++ends;
    else if (is_endpoint(event, from))
      ++begins;
  }
  if (begins >= kNone)
    return make_error(ErrorKind::Usage, fmt::format("{} start events: more than the {} one pairing can hold",
                                                    begins, kNone - 1));
  result.actions.reserve(std::min(ends, begins));
  fault_in_on_two_threads(result.actions.data(), result.actions.capacity() * sizeof(Action));
  starts.reserve(begins);  // address space only: compact() keeps the pages touched to the starts held at once
  for (const AnalysisEvent& event : events) {
    if (is_endpoint(event, to)) {
      const size_t first_open = oldest_open();
      size_t index = first_open;
      if (same_code) {
        const uint32_t head = open_by_code[event.code].head;
        index = head == kNone ? starts.size() : head;
      }
      if (index == starts.size()) {
        result.unmatched_ends.push_back(event.seq);
      } else {
        const bool reordered = index != first_open;
        if (reordered) result.out_of_order.push_back(event.seq);
        Start& start = starts[index];
        result.actions.push_back({start.seq, event.seq, start.code, event.code, reordered, start.time_ns,
                                  event.time_ns, event.time_ns - start.time_ns});
        start.closed = true;
        // The oldest open start of its code, whichever rule chose it, leaves its code's queue.
        Queue& queue = open_by_code[start.code];
        queue.head = start.next_same_code;
        if (queue.head == kNone) queue.tail = kNone;
      }
      continue;
    }
    if (is_endpoint(event, from)) {
      compact();
      const auto index = static_cast<uint32_t>(starts.size());
      Queue& queue = open_by_code[event.code];
      if (queue.tail == kNone)
        queue.head = index;
      else
        starts[queue.tail].next_same_code = index;
      queue.tail = index;
      starts.push_back({event.seq, event.time_ns, kNone, event.code, false});
    }
  }
  for (size_t i = oldest_open(); i < starts.size(); ++i)
    if (!starts[i].closed) result.unmatched_starts.push_back(starts[i].seq);
  std::vector<double> durations;
  durations.reserve(result.actions.size());
  for (Action& action : result.actions) {
    durations.push_back(action.duration_ns);
    action.bound_ns = pi_ns;
  }
  result.summary = summarize(std::move(durations));
  return result;
}

void mark_stalls(DurationsResult& result, const StallMarks& marks, size_t stall_count) {
  result.stall_count = stall_count;
  result.stalled = 0;
  if (marks.touched_events() == 0) {  // no stall touches any event: no lookup per action
    for (Action& action : result.actions) {
      action.stall_ns = 0;
      action.bound_ns = result.pi_ns > 0 ? result.pi_ns : 0;
    }
    return;
  }
  for (Action& action : result.actions) {
    action.stall_ns = std::max(marks.stall_ns(action.start_seq), marks.stall_ns(action.end_seq));
    action.bound_ns = result.pi_ns > 0 ? result.pi_ns + action.stall_ns : 0;
    if (action.stall_ns > 0) ++result.stalled;
  }
}

}  // namespace ett::host
