// exporters.h: the table of export formats: each format is one file of this folder, registered here by name.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "export/output_file.h"

namespace ett::host {

// What an exporter gets: the loaded trace, and the paired actions when the user asked for them (--from/--to).
struct ExportInput {
  const Capture& capture;
  std::span<const Action> actions;
};

struct Exporter {
  const char* name;         // --format NAME
  const char* extension;    // of the file it writes, without the dot
  const char* description;  // one line for --help
  bool takes_actions;       // accepts --from/--to
  // Writes the export into `out` as it goes (never the whole text at once: 10 M events make gigabytes).
  void (*write)(const ExportInput& input, TextOut& out);
};

// Every exporter, in the order `ett export --help` lists them.
std::span<const Exporter> exporters();

// The exporter called `name`, or nullptr.
const Exporter* find_exporter(std::string_view name);

// "csv, vcd or perfetto": the names, for messages.
std::string exporter_names();

}  // namespace ett::host
