// table_output.h: query results as an aligned table (numbers right-aligned), CSV, a JSON array of objects or
// JSON Lines, written as the rows come (TableWriter) or from a whole ResultTable.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.h"

namespace ett::host {

enum class TableFormat { Text, Csv, Json, Jsonl };

// A query's rows in `format`, handed to `write` as they come: CSV, JSON and JSON Lines row by row. The text
// table's column widths are those of all its rows, so it keeps them (about the size of their text, not a
// string per cell) and writes the table in finish().
//   text:  columns separated by two spaces under a header and a rule, numbers right-aligned, NULL as
//          nothing, then "(N rows)";
//   csv:   RFC 4180, a header line, then one line per row; fields with , " or newlines quoted; NULL empty;
//   json:  an array with one compact object per line (readable, greppable, one JSON document);
//   jsonl: one object per line.
// In JSON, a value that is a number in its canonical form becomes a JSON number, NULL null, the rest
// strings; objects are what nlohmann-json's ordered_json writes (a repeated column name: its last value,
// in its first place).
class TableWriter final : public RowSink {
 public:
  TableWriter(TableFormat format, std::function<void(std::string_view)> write);
  Status columns(std::span<const std::string> names) override;
  Status rows(std::span<const std::vector<DbValue>> batch) override;
  // The rest of the output (text: the whole table; json: the array's end).
  void finish();

 private:
  void json_row(const std::vector<DbValue>& row);
  void held_row(const std::vector<DbValue>& row);
  void write_text_table();

  TableFormat m_format;
  std::function<void(std::string_view)> m_write;
  std::vector<std::string> m_columns;
  std::vector<std::string> m_json_keys;  // each column's name as a JSON string and a colon
  bool m_repeated_names = false;         // JSON objects then go through nlohmann-json
  std::string m_line;                    // the line being written
  size_t m_rows = 0;
  // text: per column, the widest cell (the name included) and whether every cell is a number.
  std::vector<size_t> m_width;
  std::vector<bool> m_numeric;
  std::string m_held;  // text: each cell as a length byte (0xFF NULL, 0xFE: four length bytes follow) + text
};

// A whole result in one of the formats.
std::string render_table(const ResultTable& table, TableFormat format);
std::string format_table(const ResultTable& table);
std::string format_csv(const ResultTable& table);

// Whether SQL text is a number in canonical form as JSON output takes it: an integer of at most 18 digits
// after an optional minus, no leading zeros (then a JSON integer), or a decimal number with an optional
// fraction and exponent (then a JSON number if finite).
bool is_canonical_integer(std::string_view text);
bool is_canonical_real(std::string_view text);

}  // namespace ett::host
