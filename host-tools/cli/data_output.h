// data_output.h: the one --format / -o FILE / --force convention of every verb that prints data.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/database.h"
#include "db/table_output.h"
#include "export/output_file.h"

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

// A query's rows written to -o FILE or standard output as they are read (host::TableWriter). The output is
// opened when the columns arrive, so that a query that fails to start writes nothing; a file is put in place
// only by finish() (TextOut), so a query that fails midway leaves none.
class RowOutput final : public host::RowSink {
 public:
  RowOutput(const DataOutput& out, DataFormat format) : m_options(out), m_format(format) {}
  ~RowOutput() override;
  host::Status columns(std::span<const std::string> names) override;
  host::Status rows(std::span<const std::vector<host::DbValue>> batch) override;
  // The rest of the output, then the file closed: the first write error, if any.
  host::Status finish();

 private:
  const DataOutput& m_options;
  DataFormat m_format;
  std::optional<host::TextOut> m_out;
  std::optional<host::TableWriter> m_writer;
};
// A JSON array with one compact object per line: readable, greppable, and still one JSON document.
std::string json_array_text(const nlohmann::ordered_json& array);

}  // namespace ett::cli
