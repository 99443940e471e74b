// table_output.cpp: aligned-table and CSV renderings of a ResultTable.
#include "db/table_output.h"

#include <algorithm>

namespace ett::host {

namespace {

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  bool dot = false;
  for (; i < text.size(); ++i) {
    if (text[i] == '.' && !dot)
      dot = true;
    else if (text[i] < '0' || text[i] > '9')
      return false;
  }
  return true;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string format_table(const ResultTable& table) {
  const size_t columns = table.columns.size();
  std::vector<size_t> width(columns);
  std::vector<bool> numeric(columns, true);
  for (size_t c = 0; c < columns; ++c) width[c] = table.columns[c].size();
  for (const auto& row : table.rows)
    for (size_t c = 0; c < columns; ++c)
      if (row[c]) {
        width[c] = std::max(width[c], row[c]->size());
        if (!is_number(*row[c])) numeric[c] = false;
      }
  std::string out;
  auto cell = [&](const std::string& text, size_t c) {
    if (c) out += "  ";
    const std::string pad(width[c] - text.size(), ' ');
    if (numeric[c])
      out += pad + text;
    else if (c + 1 < columns)
      out += text + pad;
    else
      out += text;  // no trailing blanks
  };
  for (size_t c = 0; c < columns; ++c) cell(table.columns[c], c);
  out += '\n';
  for (size_t c = 0; c < columns; ++c) {
    if (c) out += "  ";
    out += std::string(width[c], '-');
  }
  out += '\n';
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < columns; ++c) cell(row[c].value_or(""), c);
    while (!out.empty() && out.back() == ' ') out.pop_back();  // a NULL in the last column
    out += '\n';
  }
  out += "(" + std::to_string(table.rows.size()) + (table.rows.size() == 1 ? " row)\n" : " rows)\n");
  return out;
}

std::string format_csv(const ResultTable& table) {
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) out += (c ? "," : "") + csv_field(table.columns[c]);
  out += '\n';
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c)
      out += (c ? "," : "") + (row[c] ? csv_field(*row[c]) : std::string());
    out += '\n';
  }
  return out;
}

}  // namespace ett::host
