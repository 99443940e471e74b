// fidelity_output.cpp: the fidelity report in text, CSV, JSON and JSON Lines (nlohmann-json), and --check.
#include "fidelity_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "commands.h"

namespace ett::cli {

namespace {

std::string csv_value(const nlohmann::ordered_json& value) {
  return value.is_null() ? std::string() : value.dump();  // numbers and booleans only: nothing to quote
}

}  // namespace

std::string render_fidelity(const std::vector<host::MachineFidelity>& machines, DataFormat format) {
  const nlohmann::ordered_json array = host::machines_document(machines);
  switch (format) {
    case DataFormat::Text:
      return host::format_machines(machines);
    case DataFormat::Json:
      return json_array_text(array);
    case DataFormat::Jsonl: {
      std::string text;
      for (const auto& object : array) text += object.dump() + "\n";
      return text;
    }
    case DataFormat::Csv: {
      // The keys of every object in first-seen order: machine 1 has no truth_* keys, machines 2..N have.
      std::vector<std::string> keys;
      for (const auto& object : array)
        for (const auto& [key, value] : object.items())
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      std::string text;
      for (size_t i = 0; i < keys.size(); ++i) text += (i ? "," : "") + keys[i];
      text += "\n";
      for (const auto& object : array) {
        for (size_t i = 0; i < keys.size(); ++i)
          text += (i ? "," : "") + (object.contains(keys[i]) ? csv_value(object[keys[i]]) : std::string());
        text += "\n";
      }
      return text;
    }
  }
  return {};
}

int fidelity_check_status(const std::vector<host::MachineFidelity>& machines, double tolerance_us) {
  bool clean = true, on_time = true;
  for (const host::MachineFidelity& machine : machines) {
    if (!machine.report) continue;
    clean = clean && machine.report->clean();
    on_time = on_time && machine.report->on_time(tolerance_us * 1e3);
  }
  if (!clean) {
    warn("--check: the capture lost, invented or reordered events (see fidelity above)");
    return kFidelityCheckFailed;
  }
  if (!on_time) {
    warn(
        fmt::format("--check: the captured timeline is off the scenario's by more than --tolerance {} us "
                    "(see timing above)",
                    tolerance_us));
    return kFidelityCheckFailed;
  }
  return 0;
}

void add_fidelity_check_options(CLI::App* sub, bool& check, double& tolerance_us, const std::string& what) {
  sub->add_flag("--check", check,
                "Exit 6 when an event was lost, unexpected (not sent) or out of order, or the interval or "
                "schedule error exceeds --tolerance" +
                    what);
  sub->add_option("--tolerance", tolerance_us, "Microseconds of interval and schedule error --check accepts")
      ->type_name("US")
      ->capture_default_str()
      ->check(positive_number());  // finite: CLI::PositiveNumber lets "nan" through
}

}  // namespace ett::cli
