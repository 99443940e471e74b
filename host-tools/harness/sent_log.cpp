// sent_log.cpp: reads the sent log of `ett qemu run --sent-log` by column name, and its .run.json sidecar.
#include "harness/sent_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/text_input.h"

namespace ett::host {

namespace {

constexpr const char* kRunFormat = "ett-sent-run";
constexpr int kRunVersion = 1;
// A .run.json describes one run in a few kilobytes; anything much larger is not one.
constexpr uint64_t kMaxRunDescriptionBytes = uint64_t{16} << 20;

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(
        line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

template <typename T>
bool parse_number(std::string_view text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string sent_run_path(const std::string& sent_log) {
  std::filesystem::path path(sent_log);
  path.replace_extension(".run.json");
  return path.string();
}

Status write_sent_run(const SentRun& run, const std::string& path) {
  using Json = nlohmann::ordered_json;
  const Json document{
      {"format", kRunFormat},
      {"version", kRunVersion},
      {"machine", run.machine},
      {"machines", run.machines},
      {"disk", run.disk},
      {"session", run.session ? Json(*run.session) : Json(nullptr)},
      {"guest_clock", run.guest_clock},
      {"offset_low_ticks", run.offset_bounds ? Json(run.offset_bounds->first) : Json(nullptr)},
      {"offset_high_ticks", run.offset_bounds ? Json(run.offset_bounds->second) : Json(nullptr)},
      {"origin_tsc", run.origin_tsc}};
  std::ofstream out(path, std::ios::trunc);
  if (!out) return make_error(ErrorKind::Io, errno_message(path, errno));
  out << document.dump() << "\n";
  out.close();
  if (!out) return make_error(ErrorKind::Io, errno_message(path + ": write failed", errno));
  return {};
}

Expected<SentRun> read_sent_run(const std::string& path) {
  ETT_TRY_ASSIGN(const std::string text, read_text_file(path, kMaxRunDescriptionBytes, "a run description"));
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&](const std::string& what) {
    return make_error(ErrorKind::Usage,
                      fmt::format("{}: {} (not the .run.json `ett qemu run --sent-log` writes)", path, what));
  };
  if (document.is_discarded() || !document.is_object()) return bad("not a JSON object");
  if (document.value("format", "") != kRunFormat) return bad("no \"format\": \"ett-sent-run\"");
  if (!document.contains("version") || !document["version"].is_number_integer() ||
      document["version"].get<int>() != kRunVersion)
    return bad(fmt::format("version is not {}", kRunVersion));
  SentRun run;
  try {
    run.machine = document.at("machine").get<unsigned>();
    run.machines = document.at("machines").get<unsigned>();
    run.disk = document.at("disk").get<std::string>();
    if (!document.at("session").is_null()) run.session = document.at("session").get<uint32_t>();
    run.guest_clock = document.at("guest_clock").get<bool>();
    const auto& low = document.at("offset_low_ticks");
    const auto& high = document.at("offset_high_ticks");
    if (!low.is_null() && !high.is_null())
      run.offset_bounds = std::pair<int64_t, int64_t>{low.get<int64_t>(), high.get<int64_t>()};
    run.origin_tsc = document.at("origin_tsc").get<uint64_t>();
  } catch (const nlohmann::json::exception& error) {
    return bad(error.what());
  }
  return run;
}

Expected<SentLog> read_sent_log(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return make_error(ErrorKind::Usage, path + ": is a directory, not a sent log");
  std::ifstream in(path);
  if (!in) return make_error(ErrorKind::Io, errno_message(path, errno));
  LineReader reader(in, path);
  std::string line;
  if (!reader.next(line) || line.rfind("index,", 0) != 0) {
    ETT_TRY(reader.status());
    return make_error(ErrorKind::Usage, fmt::format("{}: no header 'index,probe,code,...' (not a sent log of "
                                                    "`ett qemu run --sent-log`)",
                                                    path));
  }
  std::map<std::string, size_t, std::less<>> columns;
  const std::vector<std::string_view> names = split_commas(line);
  for (size_t i = 0; i < names.size(); ++i) columns.emplace(std::string(names[i]), i);
  // A column's position, or none.
  auto column = [&](const char* name) -> std::optional<size_t> {
    auto found = columns.find(name);
    return found == columns.end() ? std::nullopt : std::optional<size_t>(found->second);
  };
  for (const char* name :
       {"probe", "code", "scheduled_ns", "host_tsc_before", "guest_tsc_due", "guest_tsc_before", "held_back"})
    if (!column(name))
      return make_error(ErrorKind::Usage, fmt::format("{}: no column '{}' (a sent log of `ett qemu run "
                                                      "--sent-log` has it)",
                                                      path, name));
  SentLog log;
  log.held_ns_known = column("held_ns").has_value();
  while (reader.next(line)) {
    const size_t number = reader.number();
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = split_commas(line);
    if (fields.size() != names.size())
      return make_error(ErrorKind::Usage, fmt::format("{}:{}: {} fields, the header has {}", path, number,
                                                      fields.size(), names.size()));
    Status problem;
    // Reads column `name` (when the log has it) into `value`; an empty field is 0.
    auto read = [&](const char* name, auto& value) {
      const std::optional<size_t> at = column(name);
      if (!at || !problem) return;
      const std::string_view text = fields[*at];
      if (text.empty()) {
        value = 0;
        return;
      }
      if (!parse_number(text, value))
        problem = make_error(ErrorKind::Usage,
                             fmt::format("{}:{}: column {}: '{}' is not a number", path, number, name, text));
    };
    SentEvent event;
    unsigned probe = 0, code = 0, lines = 0, held_back = 0;
    read("index", event.index);
    read("probe", probe);
    read("code", code);
    read("lines", lines);
    read("scheduled_ns", event.scheduled_ns);
    read("sent_ns", event.sent_ns);
    read("host_tsc", event.host_tsc);
    read("host_tsc_before", event.host_tsc_before);
    read("guest_tsc_due", event.guest_tsc_due);
    read("guest_tsc_before", event.guest_tsc_before);
    read("held_back", held_back);
    read("held_ns", event.held_ns);
    read("utc_ns", event.utc_ns);
    if (!problem) return problem.failure();
    if (probe > 255 || code > 255 || lines > 255 || held_back > 1)
      return make_error(ErrorKind::Usage,
                        fmt::format("{}:{}: probe, code, lines or held_back out of range", path, number));
    event.probe = static_cast<uint8_t>(probe);
    event.code = static_cast<uint8_t>(code);
    event.lines = static_cast<uint8_t>(lines);
    event.held_back = held_back == 1;
    log.events.push_back(event);
  }
  ETT_TRY(reader.status());
  if (in.bad()) return make_error(ErrorKind::Io, errno_message(path, errno));
  return log;
}

}  // namespace ett::host
