// exporters.h: the table of export formats: each format is one file of this folder, registered here by name.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "common/utc_time.h"
#include "export/output_file.h"

namespace ett::host {

// What an exporter's writer gets: the trace's head (its events come later, a batch at a time), the probes'
// names and the options of `ett export`.
struct ExportInput {
  const Capture& capture;                          // the trace's header and stalls, no events
  std::span<const std::string> probe_labels = {};  // [probe - 1]: its `ett label`, "" for none
  const TscUtcClock* utc = nullptr;                // --time utc: the trace's PPS mapping
  int64_t vcd_timescale_ps = 1000;                 // --timescale
  bool vcd_bus = true;                             // not --no-bus
  int probes = 0;                                  // the highest probe among the events, from event_codes
  double earliest_ns = 0;  // for a format that needs it: the earliest time of the events
};

// An export written from events handed over a batch at a time in seq order, so that `ett export` streams the
// trace instead of loading it (Exporter::stream).
class StreamedExport {
 public:
  virtual ~StreamedExport() = default;
  // The next events and, for a format that writes each action as it closes (Exporter::actions_as_they_close),
  // the actions they close (in end seq order; else empty).
  virtual void add(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed) = 0;
  // After the last events: the actions paired from them not handed over with them (empty unless the format
  // takes actions and --from and --to were given), then the export's end.
  virtual void finish(ActionList actions) = 0;
};

struct Exporter {
  const char* name;         // --format NAME
  const char* extension;    // of the file it writes, without the dot
  const char* description;  // one line for --help
  bool takes_actions;       // accepts --from/--to
  // Whether the writer takes each action with the events that close it (StreamedExport::add): the export then
  // holds none; else all of them come to finish, after the events.
  bool actions_as_they_close;
  // The writer of the export from events handed over a batch at a time, then the actions paired from them:
  // it writes into `out` as it goes (never the whole text at once: 10 M events make gigabytes), and the
  // trace is never all in memory.
  std::unique_ptr<StreamedExport> (*stream)(const ExportInput& input, TextOut& out);
  // Whether `stream` needs input.earliest_ns: never, only without --time utc (relative times are written from
  // there), or always.
  enum class Earliest { Never, WithoutUtc, Always };
  Earliest stream_needs_earliest = Earliest::Never;
};

// Every exporter, in the order `ett export --help` lists them.
std::span<const Exporter> exporters();

// The exporter called `name`, or nullptr.
const Exporter* find_exporter(std::string_view name);

// "csv, vcd or perfetto": the names, for messages.
std::string exporter_names();

// A probe's name in the exports: its `ett label`, or "probe N" when it has none.
inline std::string probe_name(int probe, std::span<const std::string> labels) {
  if (probe >= 1 && static_cast<size_t>(probe) <= labels.size() && !labels[probe - 1].empty())
    return labels[probe - 1];
  return fmt::format("probe {}", probe);
}

}  // namespace ett::host
