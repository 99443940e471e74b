// line_names.h: what a session's data lines are called, by its probe source: D0..D7, or a serial port's
// modem-status inputs DCD, DSR, CTS, RI as D0..D3 (kernel/drivers/probe/uart_lines.h). Every host tool
// names lines and parses line names through here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/probe_layout.h"
#include "common/status.h"

namespace ett::host {

// probe=uart, uart-loopback or pci-uart: four lines D0..D3 (DCD, DSR, CTS, RI); D4..D7 do not exist.
bool is_serial_source(uint32_t probe_source);
// The ProbeSource of a name (format::probe_source_name, as the traces table stores it); 0 when unknown.
uint32_t probe_source_from_name(std::string_view name);
// The lines a source has: 4 for a serial port, 8 for the others.
int line_count(uint32_t probe_source);
// "DCD" for D0 of a serial port, "D5" otherwise.
std::string line_name(uint32_t probe_source, int line);
// "DCD (D0)" for a serial port, "D5" otherwise: a line named both ways in reports.
std::string line_label(uint32_t probe_source, int line);
// The lines of a source in one phrase: "D0 to D7", or "DCD, DSR, CTS and RI (D0 to D3; D4 to D7 do not
// exist)".
std::string lines_phrase(uint32_t probe_source);

// One line given on the command line (`option`, e.g. "--line"): DCD|DSR|CTS|RI (serial sources only),
// D0..D7 (case-insensitive) or a probe number whose probe under `layout` is one line. Usage errors name
// the line and what the source's lines are.
Expected<int> parse_line_name(std::string_view text, uint32_t probe_source, const ProbeLayout& layout,
                              std::string_view option);

// EventRecord::flags as text: "short-pulse" (kEventShortPulse), "" when none.
std::string event_flags_text(uint8_t flags);
// Whether an event is one edge of a pulse shorter than the poll step (its time, and so a width, unknown).
inline bool short_pulse_edge(uint8_t flags) {
  return (flags & format::kEventShortPulse) != 0;
}

}  // namespace ett::host
