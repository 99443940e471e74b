// row_cursor.h: rows of text written through a char pointer straight into a buffer, for exports and reports
// of millions of rows (no formatting library per field: that is most of their work).
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "common/decimal_digits.h"

namespace ett::host {

// Rows written into a buffer through a char pointer. next() makes room for one row of at most `row_max`
// bytes and says where it starts; the row's writer says where it ended with done(). The buffer grows for all
// the rows still to come at once (`typical_row` bytes each) and is cut to what was written when the cursor
// goes. A field whose length has no bound (a text) asks for room() first. The room also holds the scratch an
// integer field writes past its end (kDigitsSpill), so `row_max` counts only the characters of the row.
class RowCursor {
 public:
  RowCursor(fmt::memory_buffer& buffer, size_t rows, size_t typical_row, size_t row_max)
      : m_buffer(buffer), m_rows_left(rows), m_typical_row(typical_row), m_row_max(row_max + kDigitsSpill) {
    grow(buffer.size());
  }
  RowCursor(const RowCursor&) = delete;
  RowCursor& operator=(const RowCursor&) = delete;
  ~RowCursor() { m_buffer.resize(static_cast<size_t>(m_at - m_buffer.data())); }

  char* next() {
    if (static_cast<size_t>(m_limit - m_at) < m_row_max) grow(static_cast<size_t>(m_at - m_buffer.data()));
    return m_at;
  }
  // Room for `bytes` more than the row's own from `at` (in the row next() began) on; returns where `at` is
  // now.
  char* room(char* at, size_t bytes) {
    if (static_cast<size_t>(m_limit - at) >= m_row_max + bytes) return at;
    const size_t row = static_cast<size_t>(m_at - m_buffer.data());
    const size_t used = static_cast<size_t>(at - m_buffer.data());
    m_buffer.resize(used + bytes + m_row_max + m_rows_left * m_typical_row);
    m_at = m_buffer.data() + row;
    m_limit = m_buffer.data() + m_buffer.size();
    return m_buffer.data() + used;
  }
  void done(char* end) {
    m_at = end;
    if (m_rows_left > 0) --m_rows_left;
  }

 private:
  void grow(size_t used) {
    m_buffer.resize(used + m_row_max + m_rows_left * m_typical_row);
    m_at = m_buffer.data() + used;
    m_limit = m_buffer.data() + m_buffer.size();
  }

  fmt::memory_buffer& m_buffer;
  size_t m_rows_left;
  size_t m_typical_row;
  size_t m_row_max;
  char* m_at = nullptr;
  char* m_limit = nullptr;
};

// The fields of a RowCursor row: a literal or a text as it is, an integer in decimal (at most 20
// characters, and up to kDigitsSpill bytes of scratch after them: write_decimal).
template <size_t N>
char* put(char* at, const char (&literal)[N]) {
  std::memcpy(at, literal, N - 1);
  return at + N - 1;
}
inline char* put(char* at, std::string_view text) {
  std::memcpy(at, text.data(), text.size());
  return at + text.size();
}
template <std::integral T>
char* put_int(char* at, T value) {
  if constexpr (std::is_signed_v<T>) {
    if (value < 0) {
      *at++ = '-';
      return write_decimal(at, uint64_t{0} - static_cast<uint64_t>(value));
    }
  }
  if constexpr (std::is_same_v<T, uint8_t>) return write_byte_decimal(at, value);
  return write_decimal(at, static_cast<uint64_t>(value));
}

}  // namespace ett::host
