// exporters.cpp: the one place that lists the export formats; adding a format adds a file and a line here.
#include "export/exporters.h"

#include <utility>

#include "export/csv.h"
#include "export/perfetto.h"
#include "export/vcd.h"

namespace ett::host {

namespace {

PerfettoOptions perfetto_options(const ExportInput& input) {
  return {input.probe_labels, input.utc};
}

// A format's streaming writer (add, and finish when it has one) as a StreamedExport.
template <typename Writer>
class Streamed final : public StreamedExport {
 public:
  template <typename... Args>
  explicit Streamed(Args&&... args) : m_writer(std::forward<Args>(args)...) {}
  void add(std::span<const AnalysisEvent> events, std::span<const ActionEnds> closed) override {
    if constexpr (requires { m_writer.add(events, closed); })
      m_writer.add(events, closed);
    else
      m_writer.add(events);
  }
  void finish(ActionList actions) override {
    if constexpr (requires { m_writer.finish(actions); })
      m_writer.finish(actions);
    else if constexpr (requires { m_writer.finish(); })
      m_writer.finish();
  }

 private:
  Writer m_writer;
};

constexpr Exporter kExporters[] = {
    {"vcd", "vcd",
     "Value Change Dump for GTKWave and PulseView: a wire per data line and per probe, each probe's code as "
     "its bits",
     false, false,
     [](const ExportInput& input, TextOut& out) -> std::unique_ptr<StreamedExport> {
       return std::make_unique<Streamed<VcdWriter>>(
           input.capture.info, input.probes, input.earliest_ns, out,
           VcdOptions{input.vcd_timescale_ps, input.vcd_bus, input.probe_labels, input.utc});
     },
     Exporter::Earliest::Always},
    {"perfetto", "json",
     "Perfetto / Chrome trace JSON: a track and a code counter per probe, actions as slices", true, true,
     [](const ExportInput& input, TextOut& out) -> std::unique_ptr<StreamedExport> {
       return std::make_unique<Streamed<PerfettoWriter>>(input.capture.info, input.probes, out,
                                                         perfetto_options(input));
     }},
    {"perfetto-proto", "pftrace",
     "Perfetto's protobuf trace (for captures too large for JSON): the same tracks, written as a stream",
     true, false,
     [](const ExportInput& input, TextOut& out) -> std::unique_ptr<StreamedExport> {
       return std::make_unique<Streamed<PerfettoProtoWriter>>(
           input.capture.info, input.probes, input.earliest_ns, out, perfetto_options(input));
     },
     Exporter::Earliest::WithoutUtc},
    {"csv", "csv", "one row per event: seq, probe, code, tsc, time_ns, lines (and utc with --time utc)",
     false, false,
     [](const ExportInput& input, TextOut& out) -> std::unique_ptr<StreamedExport> {
       return std::make_unique<Streamed<CsvWriter>>(out, input.utc);
     }},
};

}  // namespace

std::span<const Exporter> exporters() {
  return kExporters;
}

const Exporter* find_exporter(std::string_view name) {
  for (const Exporter& exporter : kExporters)
    if (name == exporter.name) return &exporter;
  return nullptr;
}

std::string exporter_names() {
  std::string names;
  const size_t count = std::size(kExporters);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) names += i + 1 == count ? " or " : ", ";
    names += kExporters[i].name;
  }
  return names;
}

}  // namespace ett::host
