// scenario.cpp: parses and validates scenario files, and works out the line byte of every write.
#include "harness/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/text_input.h"

namespace ett::host {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

// "12", "12.5", "0.001": microseconds as exact nanoseconds (digits past the third decimal are rounded).
std::optional<uint64_t> parse_time_ns(std::string_view text) {
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  for (char c : whole)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  for (char c : fraction)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  uint64_t us = 0;
  if (!whole.empty()) {
    auto [end, error] = std::from_chars(whole.data(), whole.data() + whole.size(), us);
    if (error != std::errc{} || end != whole.data() + whole.size() || us > 1'000'000'000'000ull)
      return std::nullopt;
  }
  uint64_t ns = 0;
  for (size_t i = 0; i < 3; ++i)
    ns = ns * 10 + (i < fraction.size() ? static_cast<uint64_t>(fraction[i] - '0') : 0);
  if (fraction.size() > 3 && fraction[3] >= '5') ++ns;
  return us * 1000 + ns;
}

std::optional<unsigned> parse_unsigned(std::string_view text) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string format_time(uint64_t ns) {
  if (ns % 1000 == 0) return fmt::format("{} us", ns / 1000);
  return fmt::format("{}.{:03} us", ns / 1000, ns % 1000);
}

}  // namespace

Expected<Scenario> parse_scenario(std::string_view text, const std::string& file_name, ProbeLayout layout,
                                  uint8_t initial_lines) {
  Scenario scenario;
  scenario.layout = layout;
  scenario.initial_lines = initial_lines;
  uint8_t lines = initial_lines;
  std::array<int, 9> last_change_line{};  // per probe: line number of its previous event, 0 = none yet

  int line_number = 0;
  size_t position = 0;
  while (position < text.size()) {
    size_t end = text.find('\n', position);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(position, end - position);
    position = end + 1;
    ++line_number;
    auto fail = [&](const std::string& problem) {
      return make_error(ErrorKind::Usage, fmt::format("{}:{}: {}", file_name, line_number, problem));
    };

    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto fields = split_fields(line);
    if (fields.empty()) continue;
    if (fields.size() != 3)
      return fail(fmt::format("expected '<time_us> <probe> <code>', found {} field{}", fields.size(),
                              fields.size() == 1 ? "" : "s"));

    auto time_ns = parse_time_ns(fields[0]);
    if (!time_ns)
      return fail(fmt::format("invalid time '{}' (microseconds from the start, e.g. 12 or 12.5)", fields[0]));
    auto probe = parse_unsigned(fields[1]);
    if (!probe) return fail(fmt::format("invalid probe number '{}'", fields[1]));
    if (*probe < 1 || *probe > static_cast<unsigned>(layout.probe_count()))
      return fail(fmt::format("probe {} does not exist in layout {} (probes 1-{})", *probe, layout.name(),
                              layout.probe_count()));
    auto code = parse_unsigned(fields[2]);
    if (!code) return fail(fmt::format("invalid code '{}'", fields[2]));
    if (*code > layout.max_code())
      return fail(fmt::format("code {} does not fit probe {} ({} bit{})", *code, *probe,
                              layout.bits_per_probe(), layout.bits_per_probe() == 1 ? "" : "s"));

    const bool same_time = !scenario.writes.empty() && scenario.writes.back().time_ns == *time_ns;
    if (!scenario.events.empty() && *time_ns < scenario.events.back().time_ns)
      return fail(fmt::format("time {} is earlier than the previous event's {} (times must not decrease)",
                              format_time(*time_ns), format_time(scenario.events.back().time_ns)));
    const int p = static_cast<int>(*probe);
    if (same_time) {
      const ScenarioWrite& write = scenario.writes.back();
      for (size_t i = write.first; i < write.first + write.count; ++i)
        if (scenario.events[i].probe == p)
          return fail(
              fmt::format("probe {} already changes at {} (line {}); one probe changes once per instant", p,
                          format_time(*time_ns), scenario.events[i].line_number));
    }
    const uint8_t old_code = layout.code_of(lines, p);
    if (old_code == *code) {
      if (last_change_line[p] == 0)
        return fail(fmt::format("code {} does not change probe {}: it starts at {}", *code, p, old_code));
      return fail(fmt::format("code {} does not change probe {}: it is already {} (line {})", *code, p,
                              old_code, last_change_line[p]));
    }
    last_change_line[p] = line_number;
    lines = layout.with_code(lines, p, static_cast<uint8_t>(*code));

    if (!same_time) scenario.writes.push_back(ScenarioWrite{*time_ns, lines, scenario.events.size(), 0});
    ScenarioWrite& write = scenario.writes.back();
    write.lines = lines;
    ++write.count;
    scenario.events.push_back(
        ScenarioEvent{*time_ns, static_cast<uint8_t>(p), static_cast<uint8_t>(*code), lines, line_number});
  }
  // Every event of a simultaneous write leaves the lines as the whole write does.
  for (const ScenarioWrite& write : scenario.writes)
    for (size_t i = write.first; i < write.first + write.count; ++i) scenario.events[i].lines = write.lines;
  if (scenario.events.empty())
    return make_error(ErrorKind::Usage, fmt::format("{}:{}: end of file: the scenario has no events",
                                                    file_name, std::max(line_number, 1)));
  return Expected<Scenario>(std::move(scenario));
}

Expected<Scenario> load_scenario(const std::string& path, ProbeLayout layout, uint8_t initial_lines) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return make_error(ErrorKind::Usage, path + ": is a directory, not a scenario file");
  ETT_TRY_ASSIGN(const std::string contents, read_text_file(path, kMaxScenarioBytes, "a scenario"));
  return parse_scenario(contents, path, layout, initial_lines);
}

Expected<Scenario> with_pps_edges(const Scenario& scenario, int line, std::span<const PpsEdge> edges,
                                  const std::string& file_name) {
  const ProbeLayout& layout = scenario.layout;
  const auto bit = static_cast<uint8_t>(1u << line);
  int pps_probe = 1;
  for (int p = 1; p <= layout.probe_count(); ++p)
    if (layout.mask(p) & bit) pps_probe = p;
  if (scenario.initial_lines & bit)
    return make_error(
        ErrorKind::Usage,
        fmt::format("--pps-line D{} starts high (--initial-lines): a PPS line starts low", line));
  for (const ScenarioEvent& event : scenario.events)
    if (event.lines & bit)
      return make_error(ErrorKind::Usage,
                        fmt::format("{}:{}: the scenario (or its sync edges) changes D{}, the --pps-line: "
                                    "choose another line",
                                    file_name, event.line_number, line));
  if (edges.empty()) return scenario;
  auto text_line = [](uint64_t time_ns, int probe, unsigned code) {
    return fmt::format("{}.{:03d} {} {}\n", time_ns / 1000, time_ns % 1000, probe, code);
  };
  std::string text;
  std::vector<const PpsEdge*> edge_of_line(1, nullptr);  // by text line number (from 1)
  uint8_t lines = scenario.initial_lines;
  bool high = false;
  std::optional<uint64_t> pps_probe_changed;  // the latest time the PPS line's probe changed
  size_t next_edge = 0;
  for (size_t i = 0; i <= scenario.events.size(); ++i) {
    const bool last = i == scenario.events.size();
    for (; next_edge < edges.size() && (last || edges[next_edge].time_ns < scenario.events[i].time_ns);
         ++next_edge) {
      const PpsEdge& edge = edges[next_edge];
      if (edge.high == high) continue;
      uint64_t time = edge.time_ns;
      if (pps_probe_changed && time <= *pps_probe_changed) time = *pps_probe_changed + 1;
      high = edge.high;
      lines = high ? static_cast<uint8_t>(lines | bit) : static_cast<uint8_t>(lines & ~bit);
      text += text_line(time, pps_probe, layout.code_of(lines, pps_probe));
      edge_of_line.push_back(&edge);
      pps_probe_changed = time;
    }
    if (last) break;
    const ScenarioEvent& event = scenario.events[i];
    lines = layout.with_code(lines, event.probe, event.code);
    if (high) lines |= bit;
    text += text_line(event.time_ns, event.probe, layout.code_of(lines, event.probe));
    edge_of_line.push_back(nullptr);
    if (event.probe == pps_probe) pps_probe_changed = event.time_ns;
  }
  ETT_TRY_ASSIGN(Scenario merged,
                 parse_scenario(text, file_name + " with the PPS line", layout, scenario.initial_lines));
  for (ScenarioEvent& event : merged.events) {
    const auto number = static_cast<size_t>(event.line_number);
    if (number >= edge_of_line.size() || !edge_of_line[number]) continue;
    event.pps_edge = edge_of_line[number]->high ? 1 : -1;
    event.pps_second = edge_of_line[number]->second;
  }
  return merged;
}

}  // namespace ett::host
