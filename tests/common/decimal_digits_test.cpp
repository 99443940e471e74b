// decimal_digits_test.cpp: write_decimal and write_byte_decimal write what std::to_chars writes, at every
// digit count and at the edges where it splits a number into eights, and writes nothing past the room it
// names.
#include "common/decimal_digits.h"

#include <gtest/gtest.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/row_cursor.h"

namespace ett::host {
namespace {

std::string to_chars_text(uint64_t value) {
  std::array<char, 24> text{};
  return std::string(text.data(), std::to_chars(text.data(), text.data() + text.size(), value).ptr);
}

// The text write_decimal (or `write`) gives, checked to stay within its 20 bytes and its spill past the end
// it returns.
std::string written(uint64_t value, char* (*write)(char*, uint64_t) = write_decimal) {
  std::array<char, 40> room;
  room.fill('#');
  char* const at = room.data() + 8;
  char* const end = write(at, value);
  EXPECT_LE(static_cast<size_t>(end - at), 20u) << value;
  for (const char* c = room.data(); c < at; ++c) EXPECT_EQ(*c, '#') << value << ": written before the start";
  for (const char* c = end + kDigitsSpill; c < room.data() + room.size(); ++c)
    EXPECT_EQ(*c, '#') << value << ": written past the spill";
  for (const char* c = at + 20; c < room.data() + room.size(); ++c)
    EXPECT_EQ(*c, '#') << value << ": written past 20 bytes";
  return std::string(at, end);
}

TEST(DecimalDigits, EveryDigitCountAndEveryEdgeIsWhatToCharsWrites) {
  std::vector<uint64_t> values = {0, std::numeric_limits<uint64_t>::max()};
  // Each power of ten and its neighbours: every digit count, and the splits at 10^8 and 10^16.
  for (uint64_t power = 1;; power *= 10) {
    for (uint64_t delta : {uint64_t{0}, uint64_t{1}, uint64_t{2}}) {
      values.push_back(power + delta);
      values.push_back(power - delta);
    }
    if (power > std::numeric_limits<uint64_t>::max() / 10) break;
  }
  std::mt19937_64 random(11);
  for (int i = 0; i < 200'000; ++i) values.push_back(random() >> (random() % 64));
  for (uint64_t value : values) ASSERT_EQ(written(value), to_chars_text(value)) << value;
}

// A byte value (put_int of a uint8_t: probes, codes, lines) comes from a table: every one of them as
// to_chars writes it, within the same room.
TEST(DecimalDigits, EveryByteValueIsWhatToCharsWrites) {
  for (uint64_t value = 0; value < 256; ++value) {
    ASSERT_EQ(
        written(value, [](char* at, uint64_t n) { return write_byte_decimal(at, static_cast<uint8_t>(n)); }),
        to_chars_text(value));
    ASSERT_EQ(written(value, [](char* at, uint64_t n) { return put_int(at, static_cast<uint8_t>(n)); }),
              to_chars_text(value));
  }
}

TEST(DecimalDigits, EightDigitPatternsOfEveryDigitAreExact) {
  // Every digit in every place of an eight-digit group: the lanes of eight_digits do not carry into each
  // other.
  for (int place = 0; place < 8; ++place) {
    uint64_t scale = 1;
    for (int i = 0; i < place; ++i) scale *= 10;
    for (uint64_t digit = 0; digit <= 9; ++digit) {
      const uint64_t below = digit * scale + (scale - 1);  // the digit with nines below it
      ASSERT_EQ(written(below), to_chars_text(below));
      ASSERT_EQ(written(123'456'789'000'000 + below), to_chars_text(123'456'789'000'000 + below));
    }
  }
}

TEST(DecimalDigits, FixedCountsKeepLeadingZeros) {
  std::array<char, 16> room{};
  EXPECT_EQ(std::string(room.data(), write_digits<3>(room.data(), 7)), "007");
  EXPECT_EQ(std::string(room.data(), write_digits<3>(room.data(), 999)), "999");
  EXPECT_EQ(std::string(room.data(), write_digits<1>(room.data(), 0)), "0");
  EXPECT_EQ(std::string(room.data(), write_digits<6>(room.data(), 40'500)), "040500");
  EXPECT_EQ(std::string(room.data(), write_digits<8>(room.data(), 1)), "00000001");
}

}  // namespace
}  // namespace ett::host
