// data_output.cpp: the one --format / -o FILE / --force convention of every verb that prints data, and the
// text, CSV, JSON and JSON Lines forms of a result table (JSON through nlohmann-json).
#include "data_output.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "db/table_output.h"
#include "export/output_file.h"

namespace ett::cli {

namespace {

std::string names_of(const std::vector<std::string>& formats) {
  std::string text;
  for (size_t i = 0; i < formats.size(); ++i)
    text += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  return text;
}

}  // namespace

void add_data_output(CLI::App* sub, DataOutput& out, std::vector<std::string> formats) {
  const std::string names = names_of(formats);
  out.allowed = formats;
  sub->add_option("--format", out.format, names)->capture_default_str();
  sub->add_option("-o,--output", out.path, "Write to FILE instead of standard output (- is standard output)");
  sub->add_flag("--force", out.force, "Overwrite an existing output file");
}

host::Expected<DataFormat> data_format(const DataOutput& out) {
  static const std::pair<const char*, DataFormat> kNames[] = {{"text", DataFormat::Text},
                                                              {"csv", DataFormat::Csv},
                                                              {"json", DataFormat::Json},
                                                              {"jsonl", DataFormat::Jsonl}};
  for (const auto& [name, format] : kNames)
    if (out.format == name)
      for (const std::string& allowed : out.allowed)
        if (allowed == name) return format;
  return host::make_error(host::ErrorKind::Usage,
                          "--format '" + out.format + "': expected " + names_of(out.allowed));
}

bool to_stdout(const DataOutput& out) {
  return out.path.empty() || out.path == "-";
}

host::Status emit(const DataOutput& out, const std::string& text) {
  return host::write_output(to_stdout(out) ? "" : out.path, text, out.force);
}

nlohmann::ordered_json json_value(const host::DbValue& value) {
  if (!value) return nullptr;
  // SQL results come back as text: numbers in their canonical form become JSON numbers, the rest strings.
  static const std::regex kInteger("-?(0|[1-9][0-9]{0,17})");
  static const std::regex kReal("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
  if (std::regex_match(*value, kInteger)) return std::stoll(*value);
  if (std::regex_match(*value, kReal)) {
    const double number = std::strtod(value->c_str(), nullptr);
    if (std::isfinite(number)) return number;
  }
  return *value;
}

std::string json_array_text(const nlohmann::ordered_json& array) {
  std::string text = "[";
  for (size_t i = 0; i < array.size(); ++i) text += (i == 0 ? "\n  " : ",\n  ") + array[i].dump();
  return text + (array.empty() ? "]\n" : "\n]\n");
}

std::string render_table(const host::ResultTable& table, DataFormat format) {
  switch (format) {
    case DataFormat::Text:
      return host::format_table(table);
    case DataFormat::Csv:
      return host::format_csv(table);
    case DataFormat::Json:
    case DataFormat::Jsonl: {
      std::string text;
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const auto& row : table.rows) {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (size_t i = 0; i < table.columns.size() && i < row.size(); ++i)
          object[table.columns[i]] = json_value(row[i]);
        if (format == DataFormat::Jsonl)
          text += object.dump() + "\n";
        else
          rows.push_back(std::move(object));
      }
      return format == DataFormat::Json ? json_array_text(rows) : text;
    }
  }
  return {};
}

}  // namespace ett::cli
