// row_cursor_test.cpp: rows written through a RowCursor are the rows appended one by one, whatever the rows'
// lengths against the room the cursor was told of.
#include "common/row_cursor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

namespace ett::host {
namespace {

// A row: a literal, an integer, a text of random length (room() asks for it) and a newline.
std::string expected_row(uint64_t value, const std::string& text) {
  return "row " + std::to_string(value) + " [" + text + "]\n";
}

TEST(RowCursor, RowsOfAnyLengthAreWrittenWholeAndInOrder) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 200; ++round) {
    fmt::memory_buffer buffer;
    const std::string before = "kept:";
    buffer.append(before.data(), before.data() + before.size());
    std::string expected = before;
    const size_t rows = random() % 300;
    {
      // A typical row far shorter than many rows are, and texts far longer than row_max: the cursor grows.
      RowCursor cursor(buffer, rows, 1 + random() % 8, 4 + 20 + 3);
      for (size_t i = 0; i < rows; ++i) {
        const uint64_t value = random() >> (random() % 64);
        const std::string text(random() % 3 == 0 ? random() % 5000 : random() % 10,
                               static_cast<char>('a' + i % 26));
        char* at = cursor.next();
        at = put(at, "row ");
        at = put_int(at, value);
        at = put(at, " [");
        at = put(cursor.room(at, text.size()), text);
        *at++ = ']';
        *at++ = '\n';
        cursor.done(at);
        expected += expected_row(value, text);
      }
    }  // the buffer is cut to what was written when the cursor goes
    ASSERT_EQ(std::string(buffer.data(), buffer.size()), expected) << "round " << round;
  }
}

TEST(RowCursor, IntegersAreWrittenInDecimal) {
  fmt::memory_buffer buffer;
  {
    RowCursor cursor(buffer, 4, 24, 64);
    for (const int64_t value : {int64_t{0}, int64_t{-42}, std::numeric_limits<int64_t>::min()}) {
      char* at = put_int(cursor.next(), value);
      *at++ = ',';
      cursor.done(at);
    }
    char* at = put_int(cursor.next(), std::numeric_limits<uint64_t>::max());
    at = put_int(at, uint8_t{255});
    cursor.done(at);
  }
  EXPECT_EQ(std::string(buffer.data(), buffer.size()), "0,-42,-9223372036854775808,18446744073709551615255");
}

}  // namespace
}  // namespace ett::host
