// perfetto.h: a capture for the Perfetto UI (ui.perfetto.dev) and chrome://tracing, in two formats.
//
// JSON (Chrome trace events): one thread track per probe, named by its `ett label`, with an instant per
// event; a counter track per probe ("NAME code": the probe's code over time); actions as async begin/end
// pairs so that overlapping ones stay visible. Timestamps in microseconds from the capture start, or since
// 1970 (UTC) with a PPS mapping.
//
// Protobuf (Perfetto's own trace format, export/perfetto_trace.proto: a subset of its published TracePacket /
// TrackEvent schema with the same field numbers): the same tracks as TrackDescriptor packets, one instant
// TrackEvent per event that also sets its probe's counter track (an extra counter value), and a slice per
// action on "actions" tracks (one track per overlap level, as slices on one track must nest). Timestamps in
// ns: from the capture start (shifted so that a pretrigger event is not negative), or Unix ns (UTC) with a
// PPS mapping. Written a packet at a time.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "common/utc_time.h"
#include "export/output_file.h"
#include "export/written_behind.h"

namespace ett::host {

struct PerfettoOptions {
  std::span<const std::string> probe_labels;  // [probe - 1]: the probe's `ett label`, "" for none
  const TscUtcClock* utc = nullptr;           // absolute times from the PPS mapping
};

void write_perfetto(const Capture& capture, ActionList actions, TextOut& out,
                    const PerfettoOptions& options = {});

// The same JSON from events handed over a batch at a time in seq order (`ett export` streams the trace), each
// with the actions it closes: the head when made, the events' lines as they come, each action's begin and end
// right after the last event whose seq is at most its end seq (the event that closed it), then the end in
// finish(). The document is the same however the events and actions are batched. Events gather into blocks
// of a quarter million, each written by a thread of the writer's own (formatted on two,
// write_independent_lines) while the caller reads the next (EventsWrittenBehind).
class PerfettoWriter {
 public:
  // Names the capture and probes 1..probes (the highest probe of the events; an event of a higher one still
  // names its probe).
  PerfettoWriter(const CaptureInfo& info, int probes, TextOut& out, const PerfettoOptions& options);
  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;
  ~PerfettoWriter();
  // The next events, and the actions they close in the order of their end seqs (ActionPairer::take_ends).
  // An action's id is its place among all the actions added, from 1.
  void add(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed = {}) {
    m_blocks.add(events, closed);
  }
  // After the last events: `actions`, in their order after every action added (their ids go on from those),
  // then the document's end.
  void finish(ActionList actions = {});

 private:
  struct Format;
  void write(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed);

  TextOut& m_out;
  std::unique_ptr<const Format> m_format;
  uint64_t m_actions_written = 0;  // by write(), in order: the id of the next action is one more
  EventsWrittenBehind m_blocks;    // last: its thread writes with the members above
};
std::string export_perfetto(const Capture& capture, ActionList actions,
                            const PerfettoOptions& options = {});  // the same, whole

// The protobuf from events handed over a batch at a time in seq order, written as the JSON's writer writes
// it (blocks on a thread of its own): the head (the interned names, the capture's and probes' tracks) when
// made, a packet per event as they come, then in finish() the actions' tracks and slices. `earliest_ns`, the
// earliest time of all the events, is time 0 when it is before the capture start (without a PPS mapping):
// an event before it would be written at 0.
class PerfettoProtoWriter {
 public:
  PerfettoProtoWriter(const CaptureInfo& info, int probes, double earliest_ns, TextOut& out,
                      const PerfettoOptions& options);
  PerfettoProtoWriter(const PerfettoProtoWriter&) = delete;
  PerfettoProtoWriter& operator=(const PerfettoProtoWriter&) = delete;
  ~PerfettoProtoWriter();
  void add(std::span<const AnalysisEvent> events) { m_blocks.add(events); }
  void finish(ActionList actions);

 private:
  class Clock;
  void write(std::span<const AnalysisEvent> events);

  TextOut& m_out;
  std::unique_ptr<const Clock> m_clock;
  EventsWrittenBehind m_blocks;  // last: its thread writes with the members above
};
void write_perfetto_proto(const Capture& capture, ActionList actions, TextOut& out,
                          const PerfettoOptions& options = {});
std::string export_perfetto_proto(const Capture& capture, ActionList actions,
                                  const PerfettoOptions& options = {});  // the same bytes, whole

// The protobuf's action tracks: slices [starts[i], ends[i]] (an end before its start is the start) placed in
// start order (ties by index), each on the lowest level that is free at its start, a level being free again
// from the end of the slice on it. The level of each slice, and how many levels there are. `seqs`, if given,
// are the seqs of the slices' start events: a hint at the start order that spares a sort when it holds
// (checked; the levels are the same either way).
std::pair<std::vector<uint32_t>, size_t> slice_levels(std::span<const uint64_t> starts,
                                                      std::span<const uint64_t> ends,
                                                      std::span<const uint64_t> seqs = {});

}  // namespace ett::host
