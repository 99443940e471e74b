// line_names.cpp: line names by probe source (line_names.h).
#include "common/line_names.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

#include "ett/trace_format.h"

namespace ett::host {

namespace {

namespace f = ett::format;

// D0..D3 of a serial source: the modem-status inputs in the MSR's bit order (UartMsr::lines).
constexpr std::array<std::string_view, 4> kSerialLines = {"DCD", "DSR", "CTS", "RI"};

bool same_letters(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

}  // namespace

bool is_serial_source(uint32_t probe_source) {
  switch (static_cast<f::ProbeSource>(probe_source)) {
    case f::ProbeSource::Uart:
    case f::ProbeSource::UartLoopback:
    case f::ProbeSource::PciUart:
      return true;
    default:
      return false;
  }
}

uint32_t probe_source_from_name(std::string_view name) {
  for (uint32_t source = 1; source <= static_cast<uint32_t>(f::ProbeSource::PciUart); ++source)
    if (name == f::probe_source_name(source)) return source;
  return 0;
}

int line_count(uint32_t probe_source) {
  return is_serial_source(probe_source) ? static_cast<int>(kSerialLines.size()) : 8;
}

std::string line_name(uint32_t probe_source, int line) {
  if (is_serial_source(probe_source) && line >= 0 && line < static_cast<int>(kSerialLines.size()))
    return std::string(kSerialLines[static_cast<size_t>(line)]);
  return fmt::format("D{}", line);
}

std::string line_label(uint32_t probe_source, int line) {
  if (!is_serial_source(probe_source)) return line_name(probe_source, line);
  return fmt::format("{} (D{})", line_name(probe_source, line), line);
}

std::string lines_phrase(uint32_t probe_source) {
  if (!is_serial_source(probe_source)) return "D0 to D7";
  return "DCD, DSR, CTS and RI (D0 to D3; D4 to D7 do not exist)";
}

Expected<int> parse_line_name(std::string_view text, uint32_t probe_source, const ProbeLayout& layout,
                              std::string_view option) {
  const bool serial = is_serial_source(probe_source);
  const std::string source = probe_source == 0 ? "its probe source" : f::probe_source_name(probe_source);
  auto refuse = [&](std::string_view why) -> Expected<int> {
    return make_error(ErrorKind::Usage, fmt::format("{} '{}': {}", option, text, why));
  };
  for (size_t i = 0; i < kSerialLines.size(); ++i)
    if (same_letters(text, kSerialLines[i])) {
      if (!serial)
        return refuse(
            fmt::format("{} is a serial-port line (probe=uart); the session came from probe={}: "
                        "its lines are D0 to D7",
                        kSerialLines[i], source));
      return static_cast<int>(i);
    }
  int line = -1;
  if (text.size() == 2 && (text[0] == 'D' || text[0] == 'd') && text[1] >= '0' && text[1] <= '7') {
    line = text[1] - '0';
  } else if (int probe = 0;
             !text.empty() && std::from_chars(text.data(), text.data() + text.size(), probe).ptr ==
                                  text.data() + text.size()) {
    if (probe < 1 || probe > layout.probe_count())
      return refuse(fmt::format("layout {} has probes 1 to {}", layout.name(), layout.probe_count()));
    if (layout.bits_per_probe() != 1)
      return refuse(fmt::format("probe {} of layout {} is {} lines: name one line ({})", probe, layout.name(),
                                layout.bits_per_probe(), lines_phrase(probe_source)));
    line = layout.shift(probe);
  } else {
    if (serial) return refuse("expected a data line " + lines_phrase(probe_source));
    return refuse("expected a data line D0 to D7 (DCD, DSR, CTS, RI on a serial port)");
  }
  // Only a serial port has fewer than eight lines.
  if (line >= line_count(probe_source))
    return refuse(
        fmt::format("the session came from probe={}: its lines are DCD, DSR, CTS and RI (D0 to D3; D4 to D7 "
                    "do not exist)",
                    source));
  return line;
}

std::string event_flags_text(uint8_t flags) {
  return short_pulse_edge(flags) ? "short-pulse" : "";
}

}  // namespace ett::host
