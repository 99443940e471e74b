// durations.cpp: pairs start and end events into actions (the rule is in the header).
#include "analysis/durations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

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

Expected<ActionPairer> ActionPairer::make(const Endpoint& from, const Endpoint& to, PairRule rule,
                                          Keep keep) {
  if (from.probe == to.probe && (!from.code || !to.code || *from.code == *to.code))
    return make_error(ErrorKind::Usage,
                      fmt::format("--from {} and --to {} select the same events: give different probes, or "
                                  "different codes on one probe",
                                  endpoint_text(from), endpoint_text(to)));
  ActionPairer pairer;
  pairer.m_result.from = from;
  pairer.m_result.to = to;
  pairer.m_same_code = !to.code && rule == PairRule::SameCode;
  pairer.m_keep_ends = keep == Keep::Ends;
  return pairer;
}

void ActionPairer::reserve(size_t starts, size_t actions) {
  if (m_keep_ends)
    m_ends.reserve(actions);
  else
    m_result.actions.reserve(actions);
  // Address space too: compact() keeps the pages touched to the starts held at once.
  m_starts.reserve(std::min(starts, kMaxStarts));
}

void ActionPairer::fault_in_actions() {
  fault_in_on_two_threads(m_result.actions.data(), m_result.actions.capacity() * sizeof(Action));
}

Status ActionPairer::overflow() const {
  if (!m_overflow) return {};
  return make_error(
      ErrorKind::Usage,
      fmt::format("more than {} start events open at once: more than one pairing can hold", kMaxStarts));
}

size_t ActionPairer::oldest_open() {
  while (m_oldest < m_starts.size() && m_starts[m_oldest].closed) ++m_oldest;
  return m_oldest;
}

// Drops the closed starts before the oldest open one once they are half of all, so that the starts held are
// about the open ones (at 10 M events every start held cost 24 bytes of fresh memory). Every index in use (a
// queue's ends, a start's next) is at or after `oldest` and moves down with it.
void ActionPairer::compact() {
  constexpr size_t kCompactFrom = 1 << 16;
  if (m_oldest < kCompactFrom || m_oldest < m_starts.size() / 2) return;
  const auto shift = static_cast<uint32_t>(m_oldest);
  auto moved = [shift](uint32_t& index) {
    if (index != kNone) index -= shift;
  };
  m_starts.erase(m_starts.begin(), m_starts.begin() + static_cast<std::ptrdiff_t>(m_oldest));
  for (Start& start : m_starts) moved(start.next_same_code);
  for (Queue& queue : m_open_by_code) {
    moved(queue.head);
    moved(queue.tail);
  }
  m_oldest = 0;
}

void ActionPairer::fault_in_ahead() {
  if (m_keep_ends) return;
  m_fault_ahead = FaultAhead::of_block(m_result.actions.data(), m_result.actions.capacity() * sizeof(Action));
}

void ActionPairer::add(std::span<const AnalysisEvent> events) {
  if (m_keep_ends) {
    add_events<Kept::Ends>(events);
    return;
  }
  add_events<Kept::Action>(events);
  FaultAhead::follow(m_fault_ahead, m_result.actions.data(), m_result.actions.size() * sizeof(Action));
}

// The pairing; each action kept as kKept says.
template <ActionPairer::Kept kKept>
void ActionPairer::add_events(std::span<const AnalysisEvent> events) {
  const Endpoint& from = m_result.from;
  const Endpoint& to = m_result.to;
  for (const AnalysisEvent& event : events) {
    if (is_endpoint(event, to)) {
      const size_t first_open = oldest_open();
      size_t index = first_open;
      if (m_same_code) {
        const uint32_t head = m_open_by_code[event.code].head;
        index = head == kNone ? m_starts.size() : head;
      }
      if (index == m_starts.size()) {
        m_result.unmatched_ends.push_back(event.seq);
      } else {
        const bool reordered = index != first_open;
        if (reordered) ++m_result.out_of_order;
        Start& start = m_starts[index];
        if constexpr (kKept == Kept::Ends)
          m_ends.push_back({start.seq, event.seq, start.time_ns, event.time_ns, start.code, event.code});
        else
          m_result.actions.push_back({start.seq, event.seq, start.code, event.code, reordered, start.time_ns,
                                      event.time_ns, event.time_ns - start.time_ns});
        start.closed = true;
        // The oldest open start of its code, whichever rule chose it, leaves its code's queue.
        Queue& queue = m_open_by_code[start.code];
        queue.head = start.next_same_code;
        if (queue.head == kNone) queue.tail = kNone;
      }
      continue;
    }
    if (is_endpoint(event, from)) {
      compact();
      if (m_starts.size() >= kMaxStarts) {
        m_overflow = true;
        continue;
      }
      const auto index = static_cast<uint32_t>(m_starts.size());
      Queue& queue = m_open_by_code[event.code];
      if (queue.tail == kNone)
        queue.head = index;
      else
        m_starts[queue.tail].next_same_code = index;
      queue.tail = index;
      m_starts.push_back({event.seq, event.time_ns, kNone, event.code, false});
    }
  }
}

Expected<DurationsResult> ActionPairer::finish(double pi_ns, Summarize summarize) && {
  m_fault_ahead.reset();
  ETT_TRY(overflow());
  DurationsResult result = std::move(m_result);
  result.pi_ns = pi_ns;
  for (size_t i = oldest_open(); i < m_starts.size(); ++i)
    if (!m_starts[i].closed) result.unmatched_starts.push_back(m_starts[i].seq);
  std::vector<Start>().swap(m_starts);
  for (Action& action : result.actions) action.bound_ns = pi_ns;
  if (summarize == Summarize::Yes) {
    std::vector<double> durations;
    durations.reserve(result.actions.size());
    for (const Action& action : result.actions) durations.push_back(action.duration_ns);
    result.summary = ett::host::summarize(std::move(durations));
  }
  return result;
}

void ActionPairer::take_ends(std::vector<ActionEnds>& into) {
  into.clear();
  std::swap(into, m_ends);
}

Expected<std::vector<ActionEnds>> ActionPairer::finish_ends() && {
  m_fault_ahead.reset();
  ETT_TRY(overflow());
  return std::move(m_ends);
}

namespace {

// The starts and ends among `events`, at most the actions they can make. Pairings over held events are sized
// once from it: at 10 M events a doubling vector of actions held its old and new copies (hundreds of MB) at
// once. Errors: more starts than one pairing can hold.
Expected<std::pair<size_t, size_t>> count_endpoints(std::span<const AnalysisEvent> events,
                                                    const Endpoint& from, const Endpoint& to) {
  size_t ends = 0, begins = 0;
  for (const AnalysisEvent& event : events) {
    if (is_endpoint(event, to))
      ++ends;
    else if (is_endpoint(event, from))
      ++begins;
  }
  if (begins > ActionPairer::kMaxStarts)
    return make_error(ErrorKind::Usage, fmt::format("{} start events: more than the {} one pairing can hold",
                                                    begins, ActionPairer::kMaxStarts));
  return std::pair{begins, std::min(ends, begins)};
}

}  // namespace

Expected<DurationsResult> pair_actions(std::span<const AnalysisEvent> events, const Endpoint& from,
                                       const Endpoint& to, double pi_ns, PairRule rule, Summarize summarize) {
  ETT_TRY_ASSIGN(ActionPairer pairer, ActionPairer::make(from, to, rule));
  ETT_TRY_ASSIGN(const auto counts, count_endpoints(events, from, to));
  pairer.reserve(counts.first, counts.second);
  pairer.fault_in_actions();
  pairer.add(events);
  return std::move(pairer).finish(pi_ns, summarize);
}

std::vector<uint64_t> out_of_order_ends(std::span<const Action> actions, size_t limit) {
  std::vector<uint64_t> seqs;
  for (size_t i = 0; i < actions.size() && seqs.size() < limit; ++i)
    if (actions[i].out_of_order) seqs.push_back(actions[i].end_seq);
  return seqs;
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
