// perfetto.h: a capture as Chrome trace-event JSON (opens in Perfetto UI and chrome://tracing): one track
// per probe with an instant per event, and actions as async begin/end pairs so that overlapping ones stay
// visible.
#pragma once

#include <span>
#include <string>

#include "analysis/capture.h"
#include "analysis/durations.h"
#include "export/output_file.h"

namespace ett::host {

void write_perfetto(const Capture& capture, std::span<const Action> actions, TextOut& out);
std::string export_perfetto(const Capture& capture, std::span<const Action> actions);  // the same, whole

}  // namespace ett::host
