// data_output.cpp: the one --format / -o FILE / --force convention of every verb that prints data, and query
// results written in it (host::TableWriter).
#include "data_output.h"

#include <unistd.h>

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
  std::string choices;
  for (const std::string& format : formats) choices += (choices.empty() ? "" : "|") + format;
  sub->add_option("--format", out.format, names)->type_name(choices)->capture_default_str();
  sub->add_option("-o,--output", out.path, "Write to FILE instead of standard output (- is standard output)")
      ->type_name("FILE");
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

std::string json_array_text(const nlohmann::ordered_json& array) {
  std::string text = "[";
  for (size_t i = 0; i < array.size(); ++i) text += (i == 0 ? "\n  " : ",\n  ") + array[i].dump();
  return text + (array.empty() ? "]\n" : "\n]\n");
}

namespace {

host::TableFormat table_format(DataFormat format) {
  switch (format) {
    case DataFormat::Csv:
      return host::TableFormat::Csv;
    case DataFormat::Json:
      return host::TableFormat::Json;
    case DataFormat::Jsonl:
      return host::TableFormat::Jsonl;
    case DataFormat::Text:
      break;
  }
  return host::TableFormat::Text;
}

}  // namespace

RowOutput::~RowOutput() {
  m_writer.reset();  // before the output it writes to; a file not finished is removed with its TextOut
}

host::Status RowOutput::columns(std::span<const std::string> names) {
  const bool file = !to_stdout(m_options);
  ETT_TRY_ASSIGN(host::TextOut out, host::TextOut::open(file ? m_options.path : "", m_options.force));
  m_out.emplace(std::move(out));
  m_writer.emplace(table_format(m_format), [this](std::string_view text) { m_out->append(text); });
  return m_writer->columns(names);
}

host::Status RowOutput::rows(std::span<const std::vector<host::DbValue>> batch) {
  return m_writer->rows(batch);
}

host::Status RowOutput::finish() {
  if (!m_writer) return {};  // no result began
  m_writer->finish();
  return m_out->finish();
}

}  // namespace ett::cli
