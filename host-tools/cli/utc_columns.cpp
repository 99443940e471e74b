// utc_columns.cpp: `--time utc` columns and fields for the analyses' reports (utc_columns.h).
#include "utc_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <vector>

#include "analysis/input.h"

namespace ett::cli {

using namespace ett::host;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) lines.push_back(line);
  return lines;
}

// The CSV `out` (a header line, then rows) with `header` added to its header, `cells(i)` to its i-th row
// while i < count, and `rest` to the rows after those (the unmatched starts and ends of durations, say).
template <typename Cells>
std::string with_csv_columns(const std::string& out, std::string_view header, size_t count,
                             std::string_view rest, Cells cells) {
  std::string result;
  const std::vector<std::string> lines = split_lines(out);
  for (size_t i = 0; i < lines.size(); ++i) {
    result += lines[i];
    if (i == 0)
      result += header;
    else if (i - 1 < count)
      result += cells(i - 1);
    else
      result += rest;
    result += '\n';
  }
  return result;
}

}  // namespace

std::string UtcClock::at(double time_ns) const {
  return format_iso_utc(mapping.utc_of_capture_ns(time_ns, start_tsc, tsc_hz));
}

std::string UtcClock::at_tsc(uint64_t tsc) const {
  return format_iso_utc(mapping.utc_of_tsc(tsc));
}

double UtcClock::capture_ns(const UtcNs& time) const {
  // Ticks from the anchor pulse: whole seconds and the fraction apart, so no double holds Unix-epoch ns.
  const double ticks = static_cast<double>(time.second - *mapping.utc_second) * mapping.tsc_hz +
                       static_cast<double>(time.nanosecond) * mapping.tsc_hz / 1e9;
  const double since_start = mapping.anchor_tsc - static_cast<double>(start_tsc) + ticks;
  return since_start * 1e9 / static_cast<double>(tsc_hz);
}

UtcLabels UtcClock::labels() const {
  return {mapping.label_source, [clock = *this](double time_ns) { return clock.at(time_ns); }};
}

Expected<UtcNs> parse_utc_instant(std::string_view text) {
  std::string_view whole = text, zone;
  if (whole.ends_with("Z")) {
    zone = whole.substr(whole.size() - 1);
    whole.remove_suffix(1);
  } else if (whole.ends_with("+00:00")) {
    zone = whole.substr(whole.size() - 6);
    whole.remove_suffix(6);
  }
  int64_t nanosecond = 0;
  const size_t dot = whole.find('.');
  if (dot != std::string_view::npos) {
    const std::string_view digits = whole.substr(dot + 1);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos)
      return make_error(ErrorKind::Usage,
                        fmt::format("'{}': expected an ISO-8601 UTC time, 2026-11-23T16:00:05.123456789Z "
                                    "(at most 9 digits after the second)",
                                    text));
    for (size_t i = 0; i < 9; ++i) nanosecond = nanosecond * 10 + (i < digits.size() ? digits[i] - '0' : 0);
    whole = whole.substr(0, dot);
  }
  auto second = parse_utc_second(std::string(whole) + std::string(zone));
  if (!second)
    return make_error(
        ErrorKind::Usage,
        fmt::format("'{}': expected an ISO-8601 UTC time, 2026-11-23T16:00:05.123456789Z", text));
  return UtcNs{*second, nanosecond};
}

Expected<bool> parse_time_option(const std::string& text) {
  if (text == "ns") return false;
  if (text == "utc") return true;
  return make_error(ErrorKind::Usage,
                    "--time '" + text + "': expected ns (from the capture's start) or utc (ISO-8601)");
}

Expected<UtcClock> utc_clock(Database& db, const CaptureInfo& info) {
  ETT_TRY_ASSIGN(std::optional<PpsResult> stored, find_pps(db, info.trace_id));
  if (!stored)
    return make_error(
        ErrorKind::Usage,
        fmt::format("--time utc: {} has no UTC mapping: run `ett analyze pps --trace {}` first (it "
                    "needs a PPS line in the capture)",
                    info.name, info.trace_id));
  if (!stored->utc_second)
    return make_error(ErrorKind::Usage,
                      fmt::format("--time utc: the PPS mapping of {} has no UTC labels: run `ett analyze pps "
                                  "--trace {} --utc-at-edge N=ISO-8601`",
                                  info.name, info.trace_id));
  return UtcClock{*stored, info.capture_start_tsc, info.tsc_hz};
}

std::string histogram_with_utc(const std::string& out, const HistogramResult& r, const UtcClock& clock,
                               OutputFormat format) {
  if (format == OutputFormat::Csv) {
    return with_csv_columns(out, ",start_utc", r.rows.size(), ",",
                            [&](size_t i) { return "," + clock.at(r.rows[i].start_ns); });
  }
  if (format == OutputFormat::Json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(out);
    json["time"] = "utc";
    nlohmann::ordered_json& rows = json["rows"];
    for (size_t i = 0; i < rows.size() && i < r.rows.size(); ++i)
      rows[i]["start_utc"] = clock.at(r.rows[i].start_ns);
    return json.dump() + "\n";
  }
  std::string result = out + fmt::format("\nUTC (PPS mapping, labelled from {}):\n{:>14}  {}\n",
                                         clock.mapping.label_source, "from (ns)", "from (UTC)");
  for (const HistogramRow& row : r.rows)
    result += fmt::format("{:>14}  {}\n", row.label, clock.at(row.start_ns));
  return result;
}

std::string intervals_with_utc(const std::string& out, const IntervalsResult& r, const UtcClock& clock,
                               OutputFormat format) {
  if (format == OutputFormat::Csv) {
    // Header, then one row per probe.
    return with_csv_columns(out, ",first_utc,last_utc", r.probes.size(), ",,", [&](size_t i) {
      return "," + clock.at_tsc(r.probes[i].first_tsc) + "," + clock.at_tsc(r.probes[i].last_tsc);
    });
  }
  if (format == OutputFormat::Json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(out);
    json["time"] = "utc";
    nlohmann::ordered_json& probes = json["probes"];
    for (size_t i = 0; i < probes.size() && i < r.probes.size(); ++i) {
      const ProbeIntervals& p = r.probes[i];
      probes[i]["first_utc"] = clock.at_tsc(p.first_tsc);
      probes[i]["last_utc"] = clock.at_tsc(p.last_tsc);
      nlohmann::ordered_json& close = probes[i]["closer_than_tau"];
      if (!close.is_array()) continue;  // tau unknown: nothing was checked
      for (size_t k = 0; k < close.size() && k < p.close.size(); ++k) {
        close[k]["previous_time_utc"] = clock.at_tsc(p.close[k].previous_tsc);
        close[k]["time_utc"] = clock.at_tsc(p.close[k].tsc);
      }
    }
    return json.dump() + "\n";
  }
  std::string result = out;
  result += fmt::format("\nUTC (PPS mapping, labelled from {}):\n{:>5}  {:<30}  {}\n",
                        clock.mapping.label_source, "probe", "first event", "last event");
  for (const ProbeIntervals& p : r.probes)
    result +=
        fmt::format("{:>5}  {:<30}  {}\n", p.probe, clock.at_tsc(p.first_tsc), clock.at_tsc(p.last_tsc));
  // The same close pairs the report lists (its first 20).
  size_t shown = 0;
  for (const ProbeIntervals& p : r.probes)
    for (const CloseEvent& c : p.close)
      if (shown++ < 20)
        result += fmt::format("  probe {}: seq {} -> {}  {} -> {}\n", p.probe, c.previous_seq, c.seq,
                              clock.at_tsc(c.previous_tsc), clock.at_tsc(c.tsc));
  return result;
}

host::Status TimeUtcColumn::columns(std::span<const std::string> names) {
  // The last column named tsc.
  const auto last = std::find(names.rbegin(), names.rend(), "tsc");
  if (last == names.rend())
    return make_error(
        ErrorKind::Usage,
        fmt::format("--time utc: query {} lists no events (event, window and probe do)", m_query));
  m_tsc = static_cast<size_t>(names.rend() - last) - 1;
  std::vector<std::string> with_utc(names.begin(), names.end());
  with_utc.push_back("time_utc");
  return m_next.columns(with_utc);
}

host::Status TimeUtcColumn::rows(std::span<const std::vector<DbValue>> batch) {
  m_batch.assign(batch.begin(), batch.end());
  for (std::vector<DbValue>& row : m_batch) {
    DbValue utc;
    if (m_tsc < row.size() && row[m_tsc]) utc = m_clock.at_tsc(std::stoull(*row[m_tsc]));
    row.push_back(std::move(utc));
  }
  return m_next.rows(m_batch);
}

}  // namespace ett::cli
