// table_output_test.cpp: query results as text, CSV, JSON and JSON Lines, whole or a batch of rows at a time.
#include "db/table_output.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

namespace ett::host {
namespace {

std::string text(std::string_view s) {
  return std::string(s);
}

ResultTable sample() {
  ResultTable table;
  table.columns = {"seq", "label", "time_ns"};
  table.rows = {{text("5"), text("node A"), text("1.5")},
                {text("12345"), std::nullopt, text("-0")},
                {text("7"), text("a,\"b\""), std::nullopt},
                {text("08"), text(std::string(300, 'x')), text("1e5")}};
  return table;
}

TEST(TableOutput, EveryFormatOfOneTable) {
  const ResultTable table = sample();
  const std::string wide(300, 'x');
  EXPECT_EQ(render_table(table, TableFormat::Text),
            "  seq  " + text("label") + std::string(295, ' ') + "  time_ns\n" + "-----  " +
                std::string(300, '-') + "  -------\n" + "    5  node A" + std::string(294, ' ') + "  1.5\n" +
                "12345  " + std::string(300, ' ') + "  -0\n" + "    7  a,\"b\"\n" + "   08  " + wide +
                "  1e5\n" + "(4 rows)\n");
  EXPECT_EQ(render_table(table, TableFormat::Csv),
            "seq,label,time_ns\n5,node A,1.5\n12345,,-0\n7,\"a,\"\"b\"\"\",\n08," + wide + ",1e5\n");
  const std::string objects[] = {R"({"seq":5,"label":"node A","time_ns":1.5})",
                                 R"({"seq":12345,"label":null,"time_ns":0})",
                                 R"({"seq":7,"label":"a,\"b\"","time_ns":null})",
                                 R"({"seq":"08","label":")" + wide + R"(","time_ns":100000.0})"};
  EXPECT_EQ(render_table(table, TableFormat::Jsonl),
            objects[0] + "\n" + objects[1] + "\n" + objects[2] + "\n" + objects[3] + "\n");
  EXPECT_EQ(render_table(table, TableFormat::Json), "[\n  " + objects[0] + ",\n  " + objects[1] + ",\n  " +
                                                        objects[2] + ",\n  " + objects[3] + "\n]\n");
  const ResultTable empty{{"a"}, {}};
  EXPECT_EQ(render_table(empty, TableFormat::Json), "[]\n");
  EXPECT_EQ(render_table(empty, TableFormat::Jsonl), "");
  EXPECT_EQ(render_table(empty, TableFormat::Text), "a\n-\n(0 rows)\n");
  EXPECT_EQ(render_table({{"a"}, {{text("1")}}}, TableFormat::Text), "a\n-\n1\n(1 row)\n");
  // A repeated column name: one member, in its first place, with the last value (as nlohmann's object).
  EXPECT_EQ(render_table({{"a", "b", "a"}, {{text("1"), text("x"), text("2")}}}, TableFormat::Jsonl),
            "{\"a\":2,\"b\":\"x\"}\n");
}

// Fed a batch at a time (any split), the writer writes what it writes for the whole table.
TEST(TableOutput, RowsInBatchesGiveTheTextOfTheWholeTable) {
  std::mt19937_64 random(5);
  ResultTable table{{"n", "s"}, {}};
  for (int i = 0; i < 500; ++i)
    table.rows.push_back({random() % 7 ? DbValue(std::to_string(random() % 100000)) : std::nullopt,
                          DbValue(std::string(random() % 300, 'a' + static_cast<char>(i % 26)))});
  for (TableFormat format : {TableFormat::Text, TableFormat::Csv, TableFormat::Json, TableFormat::Jsonl}) {
    const std::string whole = render_table(table, format);
    std::string pieces;
    size_t writes = 0;
    TableWriter writer(format, [&](std::string_view text) {
      pieces += text;
      ++writes;
    });
    ASSERT_TRUE(writer.columns(table.columns));
    for (size_t at = 0; at < table.rows.size();) {
      const size_t n = std::min<size_t>(table.rows.size() - at, random() % 40);
      ASSERT_TRUE(writer.rows(std::span(table.rows).subspan(at, n)));
      at += n;
    }
    writer.finish();
    EXPECT_EQ(pieces, whole) << static_cast<int>(format);
    if (format != TableFormat::Text) {
      EXPECT_GT(writes, 10u) << "written as the rows came";
    }
  }
}

// The number tests agree with the regular expressions they stand for, on strings near numbers.
TEST(TableOutput, CanonicalNumbersAreWhatTheirPatternsMatch) {
  const std::regex integer("-?(0|[1-9][0-9]{0,17})");
  const std::regex real("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
  std::mt19937_64 random(3);
  const std::string alphabet = "0123456789-+.eE x";
  std::vector<std::string> cases = {"",
                                    "-",
                                    "0",
                                    "-0",
                                    "00",
                                    "01",
                                    "1.",
                                    ".5",
                                    "1.5",
                                    "1e5",
                                    "1E+5",
                                    "1e-",
                                    "123456789012345678",
                                    "1234567890123456789",
                                    "-123456789012345678",
                                    "1e",
                                    "0.0",
                                    "-0.5e-7",
                                    "1.5.5",
                                    "+1",
                                    "1 "};
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    for (size_t n = random() % 22; n > 0; --n)
      s += random() % 4 ? alphabet[random() % 10] : alphabet[random() % alphabet.size()];
    cases.push_back(s);
  }
  for (const std::string& s : cases) {
    ASSERT_EQ(is_canonical_integer(s), std::regex_match(s, integer)) << "'" << s << "'";
    ASSERT_EQ(is_canonical_real(s), std::regex_match(s, real)) << "'" << s << "'";
  }
}

}  // namespace
}  // namespace ett::host
