// text_input.h: text a user hands ett (scenarios, SQL on standard input, sent and signal logs, run
// descriptions) read within stated bounds: a line of at most kMaxLineBytes, a file of at most what its kind
// may hold, and text only (a NUL byte means a binary file or a device such as /dev/zero). A wrong file ends
// with a clear error at the bound instead of filling memory.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "common/status.h"

namespace ett::host {

inline constexpr size_t kMaxLineBytes = size_t{64} << 10;

// The whole of `path` ("-": standard input), at most `max_bytes`. `what` names the input in messages ("the
// scenario", "the SQL"). Usage errors: larger than max_bytes, a NUL byte, a line longer than kMaxLineBytes.
Expected<std::string> read_text_file(const std::string& path, uint64_t max_bytes, const std::string& what);

// Lines of a stream, one at a time (\n or \r\n; the last line may lack its \n). next() returns false at the
// end or at a bad line; status() then says which (ok at the end).
class LineReader {
 public:
  LineReader(std::istream& in, std::string name) : m_in(in), m_name(std::move(name)) {}
  bool next(std::string& line);
  // Lines read so far: the number of the line next() returned last.
  size_t number() const { return m_number; }
  const Status& status() const { return m_status; }

 private:
  std::istream& m_in;
  std::string m_name;
  size_t m_number = 0;
  Status m_status;
};

}  // namespace ett::host
