// data_output.h: the one --format / -o FILE / --force convention of every verb that prints data.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/database.h"

namespace ett::cli {

enum class DataFormat { Text, Csv, Json, Jsonl };

struct DataOutput {
  std::string format = "text";
  std::string path;  // "" or "-": standard output
  bool force = false;
  std::vector<std::string> allowed;
};

// --format (one of `formats`, the first the default unless `out.format` says otherwise), -o FILE, --force.
void add_data_output(CLI::App* sub, DataOutput& out, std::vector<std::string> formats);
host::Expected<DataFormat> data_format(const DataOutput& out);
bool to_stdout(const DataOutput& out);
// Writes `text` to -o FILE (never over an existing file without --force) or standard output.
host::Status emit(const DataOutput& out, const std::string& text);

// A query result as an aligned table, CSV, a JSON array of objects or JSON Lines; NULL is JSON null.
std::string render_table(const host::ResultTable& table, DataFormat format);
nlohmann::ordered_json json_value(const host::DbValue& value);
// A JSON array with one compact object per line: readable, greppable, and still one JSON document.
std::string json_array_text(const nlohmann::ordered_json& array);

}  // namespace ett::cli
