// durations.h: distributed actions: start events on one probe paired with end events on another,
// and their durations with the ±pi error bound (ETT paper, section 4.2).
//
// The pairing rule: events are read in sequence order. An event on the --from probe (with the --from code,
// when one is given) opens an action. An event on the --to probe (with the --to code, when given) closes the
// oldest open action that it can close: with no --to code, the oldest open start with the same code (the
// default rule: "the next event with the same code on the other probe"); with a --to code, the oldest open
// start of any code. An end that closes no open start is an unmatched end; starts still open at the end of
// the capture are unmatched starts. An end that closes a start while an older start is still open makes an
// out-of-order action (the actions overlapped and finished in a different order than they began): it is kept
// and its end listed. PairRule::Fifo drops the code condition: any end closes the oldest open start (for
// traffic whose answers do not echo the request's code).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stall_marks.h"
#include "analysis/stats.h"
#include "common/huge_pages.h"
#include "common/status.h"

namespace ett::host {

// "P" or "P:C": a probe (1..8) and optionally a code (0..255).
struct Endpoint {
  uint8_t probe = 0;
  std::optional<uint8_t> code;
};
Expected<Endpoint> parse_endpoint(std::string_view text);
std::string endpoint_text(const Endpoint& endpoint);

struct Action {
  uint64_t start_seq = 0;
  uint64_t end_seq = 0;
  uint8_t start_code = 0;
  uint8_t end_code = 0;
  bool out_of_order = false;  // its end closed it while an older start was still open
  double start_ns = 0;
  double end_ns = 0;
  double duration_ns = 0;
  double stall_ns = 0;  // the longest stall touching its start or end event (0: none; StallMarks)
  double bound_ns = 0;  // |error| <= pi + stall_ns (pi alone when no stall touches it; 0: pi unknown)
};

// An action as an export writes it, held without its events (an export that streams them): 40 bytes where
// an Action takes 64 (5 M actions: 200 MB, not 320).
struct ActionEnds {
  uint64_t start_seq = 0;
  uint64_t end_seq = 0;
  double start_ns = 0;
  double end_ns = 0;
  uint8_t start_code = 0;
  uint8_t end_code = 0;
};

// The actions an export writes: paired actions, or their ends. An action made from its ends has what
// pair_actions gives (seqs, codes, times, duration = end - start), no stall, no bound and no out-of-order
// flag.
class ActionList {
 public:
  ActionList() = default;
  ActionList(std::span<const Action> actions) : m_actions(actions) {}
  ActionList(const std::vector<Action>& actions) : m_actions(actions) {}
  ActionList(std::span<const ActionEnds> ends) : m_ends(ends) {}
  ActionList(const std::vector<ActionEnds>& ends) : m_ends(ends) {}
  // One of them is not empty.
  size_t size() const { return m_actions.size() + m_ends.size(); }
  bool empty() const { return size() == 0; }
  Action operator[](size_t i) const {
    if (!m_actions.empty()) return m_actions[i];
    const ActionEnds& ends = m_ends[i];
    return {ends.start_seq, ends.end_seq,  ends.start_code, ends.end_code,
            false,          ends.start_ns, ends.end_ns,     ends.end_ns - ends.start_ns};
  }

 private:
  std::span<const Action> m_actions;
  std::span<const ActionEnds> m_ends;
};

struct DurationsResult {
  Endpoint from;
  Endpoint to;
  std::vector<Action> actions;             // in order of their end events
  std::vector<uint64_t> unmatched_starts;  // seq of starts never closed
  std::vector<uint64_t> unmatched_ends;    // seq of ends with no open start
  size_t out_of_order = 0;                 // ends that closed a start while an older one was open (the
                                           // actions flagged out_of_order; out_of_order_ends lists them)
  Summary summary;                         // of duration_ns
  double pi_ns = 0;         // a duration no stall touches is within ±pi of the real one (0: unknown)
  size_t stalled = 0;       // actions a stall touches (their bound is pi + the stall)
  size_t stall_count = 0;   // stalls of the capture
  int64_t pi_trace_id = 0;  // the calibration capture pi was measured on (0: given by hand, or unknown)
};

enum class PairRule {
  SameCode,  // default: an end closes the oldest open start with its code (unless --to names a code)
  Fifo,      // an end closes the oldest open start, whatever the codes
};
Expected<PairRule> parse_pair_rule(std::string_view text);  // same-code | fifo

// The end seqs of the actions flagged out_of_order, in their order (the first `limit` of them).
std::vector<uint64_t> out_of_order_ends(std::span<const Action> actions, size_t limit = SIZE_MAX);

// Marks the actions a stall of the capture touches and sets every action's bound_ns (pi, or pi + the stall).
void mark_stalls(DurationsResult& result, const StallMarks& marks, size_t stall_count);

// Whether a pairing computes its summary of the durations (an export of the actions has no use for it: at
// 5 M actions it is a copy of their durations and a selection of two quantiles).
enum class Summarize { Yes, No };

// Errors: from and to describe the same events.
Expected<DurationsResult> pair_actions(std::span<const AnalysisEvent> events, const Endpoint& from,
                                       const Endpoint& to, double pi_ns, PairRule rule = PairRule::SameCode,
                                       Summarize summarize = Summarize::Yes);

// The pairing of pair_actions over events handed over a batch at a time, in seq order: a reader that streams
// the trace need not hold its events.
class ActionPairer {
 public:
  // What the pairing keeps of each action: an Action (finish), or its ends only (finish_ends, for an export).
  enum class Keep { Actions, Ends };
  // Errors: from and to describe the same events.
  static Expected<ActionPairer> make(const Endpoint& from, const Endpoint& to,
                                     PairRule rule = PairRule::SameCode, Keep keep = Keep::Actions);
  // Room for this many starts and actions (address space: pages are touched as they fill).
  void reserve(size_t starts, size_t actions);
  // The actions reserved faulted in at once on two threads (when the reservation is their count, not a
  // bound).
  void fault_in_actions();
  // Keep::Actions: the actions reserved, when 8 MB or more, faulted in on a thread of its own a window ahead
  // of the pairing (FaultAhead), until finish (when the reservation is a bound and the pairing is on the
  // critical path).
  void fault_in_ahead();
  void add(std::span<const AnalysisEvent> events);
  // The actions and the unmatched starts and ends, every action's bound pi_ns; its summary (unless told
  // not to). Errors: more starts open at once than a pairing can hold.
  Expected<DurationsResult> finish(double pi_ns, Summarize summarize = Summarize::Yes) &&;
  // Keep::Ends: the actions' ends, in the order finish gives the actions (those not taken by take_ends).
  // Errors: those of finish.
  Expected<std::vector<ActionEnds>> finish_ends() &&;
  // Keep::Ends: the ends of the actions closed since the last call, in order, swapped into `into` (its
  // contents dropped, its memory kept for the next ends), so that a caller that writes each action as it
  // closes holds none of them (at 10 M events, 5 M actions are 200 MB).
  void take_ends(std::vector<ActionEnds>& into);

  // The most start events a pairing holds (open, or closed after the oldest open one).
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr size_t kMaxStarts = kNone - 1;

 private:
  // Open starts, oldest first: every start in order with a closed flag (the oldest open one is found by
  // skipping closed ones from `oldest`), and per code a queue of the open ones, linked through the starts
  // themselves, so that finding the oldest open start with a code is O(1) however many starts stay open (a
  // linear scan was quadratic when many never close). A start keeps what its action needs: closing one reads
  // one place in memory, not the start's event far back in the capture.
  struct Start {
    uint64_t seq;
    double time_ns;
    uint32_t next_same_code;  // the next open start with its code (kNone: none yet)
    uint8_t code;
    bool closed;
  };
  struct Queue {
    uint32_t head = kNone, tail = kNone;
  };
  ActionPairer() = default;
  size_t oldest_open();
  void compact();
  Status overflow() const;  // the error of a start that came when kMaxStarts were held
  // What add_events keeps of an action: an Action or its ends.
  enum class Kept { Action, Ends };
  template <Kept kKept>
  void add_events(std::span<const AnalysisEvent> events);

  DurationsResult m_result;
  std::vector<ActionEnds> m_ends;             // Keep::Ends: the actions' ends, not in m_result
  std::unique_ptr<FaultAhead> m_fault_ahead;  // fault_in_ahead: of the vector the pairing keeps
  bool m_keep_ends = false;
  bool m_same_code = false;  // an end closes the oldest open start of its code
  bool m_overflow = false;   // a start came when kMaxStarts were held
  std::vector<Start> m_starts;
  std::array<Queue, 256> m_open_by_code;
  size_t m_oldest = 0;
};

}  // namespace ett::host
