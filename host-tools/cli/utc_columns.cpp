// utc_columns.cpp: `--time utc` columns and fields for the analyses' reports (utc_columns.h).
#include "utc_columns.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>
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

}  // namespace

std::string UtcClock::at(double time_ns) const {
  return format_iso_utc(mapping.utc_of_capture_ns(time_ns, start_tsc, tsc_hz));
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

std::string durations_with_utc(const std::string& out, const DurationsResult& r, const UtcClock& clock,
                               OutputFormat format) {
  if (format == OutputFormat::Csv) {
    // Header, one row per action, then the unmatched starts and ends (no times).
    std::string result;
    const std::vector<std::string> lines = split_lines(out);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string extra = ",,";
      if (i == 0)
        extra = ",start_utc,end_utc";
      else if (i - 1 < r.actions.size())
        extra = "," + clock.at(r.actions[i - 1].start_ns) + "," + clock.at(r.actions[i - 1].end_ns);
      result += lines[i] + extra + "\n";
    }
    return result;
  }
  if (format == OutputFormat::Json) {
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(out);
    json["time"] = "utc";
    nlohmann::ordered_json& actions = json["actions"];
    for (size_t i = 0; i < actions.size() && i < r.actions.size(); ++i) {
      actions[i]["start_utc"] = clock.at(r.actions[i].start_ns);
      actions[i]["end_utc"] = clock.at(r.actions[i].end_ns);
    }
    return json.dump() + "\n";
  }
  std::string result = out;
  if (r.actions.empty()) return result;
  result += fmt::format("\nUTC (PPS mapping, labelled from {}):\n{:>10}  {:>10}  {:<30}  {}\n",
                        clock.mapping.label_source, "start_seq", "end_seq", "start", "end");
  for (const Action& a : r.actions)
    result += fmt::format("{:>10}  {:>10}  {:<30}  {}\n", a.start_seq, a.end_seq, clock.at(a.start_ns),
                          clock.at(a.end_ns));
  return result;
}

std::string histogram_with_utc(const std::string& out, const HistogramResult& r, const UtcClock& clock,
                               OutputFormat format) {
  if (format == OutputFormat::Csv) {
    std::string result;
    const std::vector<std::string> lines = split_lines(out);
    for (size_t i = 0; i < lines.size(); ++i)
      result += lines[i] +
                (i == 0                  ? ",start_utc"
                 : i - 1 < r.rows.size() ? "," + clock.at(r.rows[i - 1].start_ns)
                                         : ",") +
                "\n";
    return result;
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

}  // namespace ett::cli
