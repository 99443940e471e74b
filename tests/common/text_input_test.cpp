// text_input_test.cpp: the bounded reader of user text (common/text_input.h): lines end at \n or \r\n, the
// last may lack its \n, and a NUL byte, an over-long line or an over-large file stops it with a clear error.
#include "common/text_input.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

// Every line `reader` gives, and its status at the end.
std::vector<std::string> all_lines(LineReader& reader) {
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

TEST(LineReader, CrlfAndALastLineWithoutNewline) {
  std::istringstream in("a,b\r\n\r\nlast");
  LineReader reader(in, "x.csv");
  EXPECT_EQ(all_lines(reader), (std::vector<std::string>{"a,b", "", "last"}));
  EXPECT_TRUE(reader.status());
  EXPECT_EQ(reader.number(), 3u);
}

TEST(LineReader, ALineOfExactlyTheBoundIsKeptOneByteMoreIsRefused) {
  std::istringstream fits(std::string(kMaxLineBytes, 'x') + "\n");
  LineReader fits_reader(fits, "x.csv");
  ASSERT_EQ(all_lines(fits_reader).size(), 1u);
  EXPECT_TRUE(fits_reader.status());

  std::istringstream in("ok\n" + std::string(kMaxLineBytes + 1, 'x') + "\nnever read\n");
  LineReader reader(in, "x.csv");
  EXPECT_EQ(all_lines(reader), std::vector<std::string>{"ok"});
  ASSERT_FALSE(reader.status());
  EXPECT_EQ(reader.status().error().message,
            "x.csv:2: a line longer than 65536 bytes: not a file of this kind");
}

TEST(LineReader, ANulByteNamesTheLine) {
  std::istringstream in(std::string("one\ntw\0o\n", 9));
  LineReader reader(in, "x.csv");
  EXPECT_EQ(all_lines(reader), std::vector<std::string>{"one"});
  ASSERT_FALSE(reader.status());
  EXPECT_EQ(reader.status().error().message, "x.csv:2: a NUL byte: not a text file");
}

TEST(LineReader, DevZeroStopsAtTheFirstByte) {
  std::ifstream in("/dev/zero", std::ios::binary);
  LineReader reader(in, "/dev/zero");
  EXPECT_TRUE(all_lines(reader).empty());
  ASSERT_FALSE(reader.status());
  EXPECT_EQ(reader.status().error().kind, ErrorKind::Usage);
}

TEST(ReadTextFile, ReadsWithinTheBoundsAndRefusesBeyond) {
  test::TempDir dir;
  const std::string file = dir.file("s.scn");
  std::ofstream(file) << "0 1 1\r\n10 1 2";
  auto text = read_text_file(file, 100, "a scenario");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "0 1 1\r\n10 1 2");

  auto too_big = read_text_file(file, 10, "a scenario");
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().message, file + ": larger than 10 bytes, the most a scenario may hold");

  auto zero = read_text_file("/dev/zero", uint64_t{1} << 30, "a scenario");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero: a NUL byte at offset 0: not a text file");

  std::ofstream(file) << std::string(kMaxLineBytes + 1, 'x');
  auto long_line = read_text_file(file, uint64_t{1} << 30, "a scenario");
  ASSERT_FALSE(long_line);
  EXPECT_EQ(long_line.error().message, file + ":1: a line longer than 65536 bytes: not a file of this kind");

  auto directory = read_text_file(dir.file(""), 100, "a scenario");
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().kind, ErrorKind::Usage);
}

}  // namespace
}  // namespace ett::host
