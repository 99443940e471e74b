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

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/capture.h"
#include "analysis/stall_marks.h"
#include "analysis/stats.h"
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

struct DurationsResult {
  Endpoint from;
  Endpoint to;
  std::vector<Action> actions;             // in order of their end events
  std::vector<uint64_t> unmatched_starts;  // seq of starts never closed
  std::vector<uint64_t> unmatched_ends;    // seq of ends with no open start
  std::vector<uint64_t> out_of_order;      // seq of ends that closed a start while an older one was open
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

// Marks the actions a stall of the capture touches and sets every action's bound_ns (pi, or pi + the stall).
void mark_stalls(DurationsResult& result, const StallMarks& marks, size_t stall_count);

// Errors: from and to describe the same events.
Expected<DurationsResult> pair_actions(std::span<const AnalysisEvent> events, const Endpoint& from,
                                       const Endpoint& to, double pi_ns, PairRule rule = PairRule::SameCode);

}  // namespace ett::host
