// table_output.cpp: aligned-table, CSV, JSON and JSON Lines renderings of query results, row by row.
#include "db/table_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"

namespace ett::host {

namespace {

using Json = nlohmann::ordered_json;

constexpr unsigned char kNullCell = 0xFF;
constexpr unsigned char kLongCell = 0xFE;

// What the text table right-aligns: an optional minus, then digits with at most one dot.
bool is_number(std::string_view text) {
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

void append_csv_field(std::string& out, std::string_view text) {
  // One pass (find_first_of searches the four characters for each character of the text).
  if (std::none_of(text.begin(), text.end(),
                   [](char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; })) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits from `i`: where they end.
size_t skip_digits(std::string_view text, size_t i) {
  while (i < text.size() && digit(text[i])) ++i;
  return i;
}

// -?(0|[1-9][0-9]*) from the start: where it ends, or npos.
size_t integer_part_end(std::string_view text) {
  size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  if (i == text.size() || !digit(text[i])) return std::string_view::npos;
  if (text[i] == '0') return i + 1;
  return skip_digits(text, i);
}

// A cell's value in JSON: SQL results come back as text; numbers in their canonical form become JSON numbers,
// NULL null, the rest strings.
Json json_value(const DbValue& value) {
  if (!value) return nullptr;
  if (is_canonical_integer(*value)) return std::stoll(*value);
  if (is_canonical_real(*value)) {
    const double number = std::strtod(value->c_str(), nullptr);
    if (std::isfinite(number)) return number;
  }
  return *value;
}

// The same, written: integers (most cells) without a Json value.
void append_json_value(std::string& out, const DbValue& value) {
  if (!value)
    out += "null";
  else if (is_canonical_integer(*value))
    fmt::format_to(std::back_inserter(out), "{}", std::stoll(*value));
  else
    out += json_value(value).dump();
}

}  // namespace

bool is_canonical_integer(std::string_view text) {
  const size_t end = integer_part_end(text);
  return end == text.size() && end - (text[0] == '-' ? 1 : 0) <= 18;
}

bool is_canonical_real(std::string_view text) {
  size_t i = integer_part_end(text);
  if (i == std::string_view::npos) return false;
  if (i < text.size() && text[i] == '.') {
    const size_t fraction = skip_digits(text, i + 1);
    if (fraction == i + 1) return false;
    i = fraction;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t exponent = skip_digits(text, i);
    if (exponent == i) return false;
    i = exponent;
  }
  return i == text.size();
}

TableWriter::TableWriter(TableFormat format, std::function<void(std::string_view)> write)
    : m_format(format), m_write(std::move(write)) {}

Status TableWriter::columns(std::span<const std::string> names) {
  m_columns.assign(names.begin(), names.end());
  switch (m_format) {
    case TableFormat::Text:
      m_width.clear();
      for (std::string& name : m_columns) name = escape_control_characters(name);
      for (const std::string& name : m_columns) m_width.push_back(name.size());
      m_numeric.assign(names.size(), true);
      break;
    case TableFormat::Csv:
      for (size_t c = 0; c < names.size(); ++c) {
        if (c) m_line += ',';
        append_csv_field(m_line, names[c]);
      }
      m_line += '\n';
      m_write(m_line);
      m_line.clear();
      break;
    case TableFormat::Json:
    case TableFormat::Jsonl:
      for (size_t c = 0; c < names.size(); ++c) {
        m_json_keys.push_back(Json(names[c]).dump() + ":");
        for (size_t before = 0; before < c; ++before) m_repeated_names |= names[before] == names[c];
      }
      break;
  }
  return {};
}

void TableWriter::json_row(const std::vector<DbValue>& row) {
  if (m_format == TableFormat::Json) m_line += m_rows == 0 ? "[\n  " : ",\n  ";
  if (m_repeated_names) {
    Json object = Json::object();
    for (size_t c = 0; c < m_columns.size() && c < row.size(); ++c) object[m_columns[c]] = json_value(row[c]);
    m_line += object.dump();
  } else {
    m_line += '{';
    for (size_t c = 0; c < m_columns.size() && c < row.size(); ++c) {
      if (c) m_line += ',';
      m_line += m_json_keys[c];
      append_json_value(m_line, row[c]);
    }
    m_line += '}';
  }
  if (m_format == TableFormat::Jsonl) m_line += '\n';
}

void TableWriter::held_row(const std::vector<DbValue>& row) {
  for (size_t c = 0; c < m_columns.size(); ++c) {
    const DbValue& given = c < row.size() ? row[c] : DbValue();
    if (!given) {
      m_held += static_cast<char>(kNullCell);
      continue;
    }
    // A text table goes to a terminal: control characters in a label are shown, not sent.
    const DbValue escaped =
        has_control_characters(*given) ? DbValue(escape_control_characters(*given)) : DbValue();
    const DbValue& cell = escaped ? escaped : given;
    m_width[c] = std::max(m_width[c], cell->size());
    if (!is_number(*cell)) m_numeric[c] = false;
    if (cell->size() < kLongCell) {
      m_held += static_cast<char>(cell->size());
    } else {
      m_held += static_cast<char>(kLongCell);
      const auto length = static_cast<uint32_t>(cell->size());
      m_held.append(reinterpret_cast<const char*>(&length), sizeof length);
    }
    m_held += *cell;
  }
}

Status TableWriter::rows(std::span<const std::vector<DbValue>> batch) {
  for (const std::vector<DbValue>& row : batch) {
    switch (m_format) {
      case TableFormat::Text:
        held_row(row);
        break;
      case TableFormat::Csv:
        for (size_t c = 0; c < row.size(); ++c) {
          if (c) m_line += ',';
          if (row[c]) append_csv_field(m_line, *row[c]);
        }
        m_line += '\n';
        break;
      case TableFormat::Json:
      case TableFormat::Jsonl:
        json_row(row);
        break;
    }
    ++m_rows;
  }
  if (!m_line.empty()) m_write(m_line);
  m_line.clear();
  return {};
}

void TableWriter::write_text_table() {
  const size_t columns = m_columns.size();
  auto cell = [&](std::string_view text, size_t c) {
    if (c) m_line += "  ";
    const size_t pad = m_width[c] - text.size();
    if (m_numeric[c]) {
      m_line.append(pad, ' ');
      m_line += text;
    } else {
      m_line += text;
      if (c + 1 < columns) m_line.append(pad, ' ');  // no trailing blanks
    }
  };
  for (size_t c = 0; c < columns; ++c) cell(m_columns[c], c);
  m_line += '\n';
  for (size_t c = 0; c < columns; ++c) {
    if (c) m_line += "  ";
    m_line.append(m_width[c], '-');
  }
  m_line += '\n';
  size_t at = 0;
  for (size_t r = 0; r < m_rows; ++r) {
    for (size_t c = 0; c < columns; ++c) {
      const auto mark = static_cast<unsigned char>(m_held[at++]);
      size_t length = mark;
      if (mark == kNullCell) {
        length = 0;
      } else if (mark == kLongCell) {
        uint32_t long_length = 0;
        std::memcpy(&long_length, m_held.data() + at, sizeof long_length);
        at += sizeof long_length;
        length = long_length;
      }
      cell(std::string_view(m_held).substr(at, length), c);
      at += length;
    }
    while (!m_line.empty() && m_line.back() == ' ') m_line.pop_back();  // a NULL in the last column
    m_line += '\n';
    if (m_line.size() >= (size_t{1} << 16)) {
      m_write(m_line);
      m_line.clear();
    }
  }
  m_line += "(" + std::to_string(m_rows) + (m_rows == 1 ? " row)\n" : " rows)\n");
}

void TableWriter::finish() {
  if (m_format == TableFormat::Text) write_text_table();
  if (m_format == TableFormat::Json) m_line += m_rows == 0 ? "[]\n" : "\n]\n";
  if (!m_line.empty()) m_write(m_line);
  m_line.clear();
}

std::string render_table(const ResultTable& table, TableFormat format) {
  std::string out;
  TableWriter writer(format, [&out](std::string_view text) { out += text; });
  (void)writer.columns(table.columns);
  (void)writer.rows(table.rows);
  writer.finish();
  return out;
}

std::string format_table(const ResultTable& table) {
  return render_table(table, TableFormat::Text);
}

std::string format_csv(const ResultTable& table) {
  return render_table(table, TableFormat::Csv);
}

}  // namespace ett::host
