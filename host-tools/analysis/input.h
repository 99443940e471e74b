// input.h: reads a loaded trace from the trace database (either engine) into an in-memory Capture, and
// stores/looks up the precision measured on a machine (table analysis_precision).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "analysis/histogram.h"
#include "analysis/intervals.h"
#include "analysis/pps.h"
#include "analysis/precision.h"
#include "db/database.h"

namespace ett::host {

// The trace to analyse: `trace` when given (it must exist), else the most recently loaded one. A trace loaded
// with --salvage that lost events is told to the loss notice (set_loss_notice), so that every analysis and
// export says a gap in those seqs is a loss, not a quiet period.
Expected<int64_t> resolve_trace(Database& db, std::optional<int64_t> trace);
// Called with "trace 3 lost 2046 events (seqs 2046-4091) when it was salvaged: ..." (the CLI warns).
void set_loss_notice(std::function<void(const std::string&)> notice);

// The traces row and every event of the trace, in seq order. time_ns is recomputed from the TSC as a double
// (sub-ns), like the loader's integer column but without its rounding.
Expected<Capture> load_capture(Database& db, int64_t trace_id);
// The traces row alone (no stalls, no events): what a query of a few rows needs to know of its trace.
Expected<CaptureInfo> load_capture_info(Database& db, int64_t trace_id);

// Creates analysis_precision when missing and replaces the rows of `trace_id` with the result's levels.
Status store_precision(Database& db, int64_t trace_id, const PrecisionResult& result);

// A stored precision level: the pi of the machine a capture came from.
struct StoredPrecision {
  int64_t trace_id = 0;  // the calibration capture it was measured on
  double coverage = 0;
  double tau_ns = 0;
  double epsilon_ns = 0;
  double pi_ns = 0;
};

// The newest stored precision at `coverage` (default: 100 %) measured on the same CPU (cpu_vendor and
// cpu_brand of the traces rows) as `trace_id`; nullopt when none is stored.
Expected<std::optional<StoredPrecision>> find_precision(Database& db, int64_t trace_id,
                                                        double coverage = 1.0);

// Refuses a probe or code the trace's layout cannot have ("--from 5: trace 1 has layout 2x4: probes 1-2"):
// such an endpoint would select nothing, and an empty result would look like a measurement.
Status check_endpoint(const CaptureInfo& info, const Endpoint& endpoint, std::string_view option);
// Both ends of the actions (--from and --to).
Status check_endpoints(const CaptureInfo& info, const Endpoint& from, const Endpoint& to);

// Opens the database and reads one trace (resolve_trace's rule): what every `ett analyze/export/report`
// starts with. A trace without events is refused with a message naming it: there is nothing to analyse or
// export.
struct LoadedTrace {
  std::unique_ptr<Database> db;
  Capture capture;
};
Expected<LoadedTrace> open_trace(const std::string& db_url, std::optional<int64_t> trace);
// The same without the events (capture.events is empty), for a command that streams them
// (stream_trace_events).
Expected<LoadedTrace> open_trace_head(const std::string& db_url, std::optional<int64_t> trace);

// The events of the trace `capture` heads, in seq order, handed to `sink` a batch at a time as they are read
// (Database::read_events; time_ns as load_capture computes it): they are never all in memory. A trace without
// events is refused as open_trace refuses it (the sink was never called). With `restart`, the stream can
// start again from the first event (Database::read_events), which lets PostgreSQL read in its plain scan's
// order.
Status stream_trace_events(Database& db, const Capture& capture, const EventSink& sink,
                           const StreamRestart& restart = {});

// The earliest time of the trace's events as stream_trace_events hands them over (time_ns as load_capture
// computes it), 0 for a trace without events. With a TSC rate, the least TSC of the event_blocks blocks whose
// least time is the trace's (time only grows with the TSC): a few thousand events read, not the trace.
// Without a rate, or without event_blocks rows, from all the events.
Expected<double> earliest_event_ns(Database& db, const CaptureInfo& info);

// The trace's events per probe and code (event_codes, which the load writes).
struct CodeCount {
  int probe = 0;
  int code = 0;
  uint64_t events = 0;
};
Expected<std::vector<CodeCount>> code_counts(Database& db, int64_t trace_id);

// The refusal of a trace without events ("... has no events: nothing to analyse or export"), and that refusal
// when the trace has none (one row looked for through the primary key).
Status no_events(const CaptureInfo& info);
Status require_events(Database& db, const CaptureInfo& info);

// The times of the trace's first and last events in seq order (time_ns as load_capture computes it): two
// rows read through the primary key, not the trace. nullopt for a trace without events.
struct EventTimeSpan {
  double first_ns = 0;
  double last_ns = 0;
};
Expected<std::optional<EventTimeSpan>> first_and_last_event_ns(Database& db, const CaptureInfo& info);

// analyze_precision of the trace `head` heads (open_trace_head), its events streamed: a calibration capture
// keeps only its loop steps (8 bytes a step where an event takes 32), any other capture reads none (its
// estimate comes from the check intervals the head holds). A trace without events is refused as open_trace
// refuses it.
Expected<PrecisionResult> stored_precision(Database& db, const Capture& head,
                                           const PrecisionOptions& options);

// analyze_intervals of the trace `head` heads (open_trace_head) with the stalls it holds, gathered as its
// events are read (no event held; each probe's gaps given room by event_codes' counts). A trace without
// events is refused as open_trace refuses it.
Expected<IntervalsResult> stored_intervals(Database& db, const Capture& head, double tau_ns);

// The histogram of the trace `info` heads. By code or probe without a filter: the counts its load wrote
// (event_codes), no event read. Otherwise counted as its events are read: the parts of the read at once, each
// on its own thread into its own counters, merged at the end (a count needs no order; no event held). A trace
// without events is refused as open_trace refuses it.
Expected<HistogramResult> stored_histogram(Database& db, const CaptureInfo& info, const HistogramSpec& spec,
                                           const std::optional<TritPattern>& filter);

// The PPS mapping of a trace (`ett analyze pps` stores it, table pps_mapping): its rate, anchor and UTC
// label. The stored result has no pulse list.
Status store_pps(Database& db, int64_t trace_id, const PpsResult& result);
Expected<std::optional<PpsResult>> find_pps(Database& db, int64_t trace_id);

// The pi to quote for a trace: `override_ns` when given, else the stored 100 % precision of its machine (and
// the calibration trace it was measured on), else 0 (unknown).
struct QuotedPi {
  double pi_ns = 0;
  int64_t trace_id = 0;  // the calibration capture (0: given by hand, or unknown)
};
Expected<QuotedPi> resolve_pi(Database& db, int64_t trace_id, std::optional<double> override_ns);

// The paired actions of a stored trace, with the pi it quotes and the actions a stall touches marked: the
// input of `ett compare` and of the report's comparison. Paired as the events are read, which are never all
// in memory (only the later parts of the read until their turn; Database::read_events). `events_read`, when
// given, gets the count of the trace's events.
Expected<DurationsResult> stored_actions(Database& db, int64_t trace_id, const Endpoint& from,
                                         const Endpoint& to, PairRule rule, std::optional<double> pi_override,
                                         size_t* events_read = nullptr);
// The same for `ett analyze durations`, which refuses a trace without events as open_trace does.
Expected<DurationsResult> trace_actions(Database& db, const CaptureInfo& info, const Endpoint& from,
                                        const Endpoint& to, PairRule rule, std::optional<double> pi_override);

}  // namespace ett::host
