// scenario_test.cpp: scenario files: good ones become writes with the right line bytes, bad ones say where.
#include "harness/scenario.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

namespace f = ett::format;

Scenario parse_ok(std::string_view text, ProbeLayout layout = ProbeLayout(), uint8_t initial = 0) {
  auto parsed = parse_scenario(text, "scn.txt", layout, initial);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : Scenario{};
}

std::string parse_error(std::string_view text, ProbeLayout layout = ProbeLayout(), uint8_t initial = 0) {
  auto parsed = parse_scenario(text, "scn.txt", layout, initial);
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.error().kind, ErrorKind::Usage);
  return parsed.error().message;
}

TEST(Scenario, ParsesEventsCommentsAndBlankLines) {
  const Scenario scenario = parse_ok(
      "# a comment\n"
      "\n"
      "0 1 3          # probe 1 to 3\n"
      "   12.5\t2 15\r\n"
      "12.5 1 0\n"
      "100.0004 2 1\n"
      "200.0005 1 9 # rounds to the nanosecond\n");
  ASSERT_EQ(scenario.events.size(), 5u);
  EXPECT_EQ(scenario.events[0].time_ns, 0u);
  EXPECT_EQ(scenario.events[0].line_number, 3);
  EXPECT_EQ(scenario.events[0].lines, 0x03);
  EXPECT_EQ(scenario.events[1].time_ns, 12'500u);
  EXPECT_EQ(scenario.events[1].probe, 2);
  EXPECT_EQ(scenario.events[1].code, 15);
  // 12.5 us: probes 2 and 1 change together, so both events leave the lines as the whole write does.
  EXPECT_EQ(scenario.events[1].lines, 0xF0);
  EXPECT_EQ(scenario.events[2].lines, 0xF0);
  EXPECT_EQ(scenario.events[3].time_ns, 100'000u);
  EXPECT_EQ(scenario.events[3].lines, 0x10);
  EXPECT_EQ(scenario.events[4].time_ns, 200'001u);
  EXPECT_EQ(scenario.events[4].lines, 0x19);

  ASSERT_EQ(scenario.writes.size(), 4u);
  EXPECT_EQ(scenario.writes[1].time_ns, 12'500u);
  EXPECT_EQ(scenario.writes[1].first, 1u);
  EXPECT_EQ(scenario.writes[1].count, 2u);
  EXPECT_EQ(scenario.writes[1].lines, 0xF0);
  EXPECT_EQ(scenario.writes[3].lines, 0x19);
}

TEST(Scenario, LinesFollowTheLayoutAndInitialLines) {
  const Scenario single = parse_ok("0 8 1\n1 1 0\n2 3 1\n", ProbeLayout(f::Layout::Single8x1), 0x01);
  ASSERT_EQ(single.events.size(), 3u);
  EXPECT_EQ(single.events[0].lines, 0x81);
  EXPECT_EQ(single.events[1].lines, 0x80);
  EXPECT_EQ(single.events[2].lines, 0x84);

  const Scenario quad = parse_ok("5 4 3\n6 2 2\n", ProbeLayout(f::Layout::Quad4x2));
  EXPECT_EQ(quad.events[0].lines, 0xC0);
  EXPECT_EQ(quad.events[1].lines, 0xC8);

  const Scenario byte = parse_ok("0 1 255\n1 1 0\n", ProbeLayout(f::Layout::Byte1x8));
  EXPECT_EQ(byte.events[0].lines, 0xFF);
  EXPECT_EQ(byte.events[1].lines, 0x00);
}

TEST(Scenario, ErrorsNameFileLineAndProblem) {
  EXPECT_EQ(parse_error("0 1 1\n1 2 17\n"), "scn.txt:2: code 17 does not fit probe 2 (4 bits)");
  EXPECT_EQ(parse_error("\n\n0 3 1\n"), "scn.txt:3: probe 3 does not exist in layout 2x4 (probes 1-2)");
  EXPECT_EQ(parse_error("0 0 1\n"), "scn.txt:1: probe 0 does not exist in layout 2x4 (probes 1-2)");
  EXPECT_EQ(parse_error("0 1 2\n", ProbeLayout(f::Layout::Single8x1)),
            "scn.txt:1: code 2 does not fit probe 1 (1 bit)");
  EXPECT_EQ(parse_error("0 1\n"), "scn.txt:1: expected '<time_us> <probe> <code>', found 2 fields");
  EXPECT_EQ(parse_error("0 1 2 3\n"), "scn.txt:1: expected '<time_us> <probe> <code>', found 4 fields");
  EXPECT_EQ(parse_error("soon 1 2\n"),
            "scn.txt:1: invalid time 'soon' (microseconds from the start, e.g. 12 or 12.5)");
  EXPECT_EQ(parse_error("-5 1 2\n"),
            "scn.txt:1: invalid time '-5' (microseconds from the start, e.g. 12 or 12.5)");
  EXPECT_EQ(parse_error("1e3 1 2\n"),
            "scn.txt:1: invalid time '1e3' (microseconds from the start, e.g. 12 or 12.5)");
  EXPECT_EQ(parse_error("0 one 2\n"), "scn.txt:1: invalid probe number 'one'");
  EXPECT_EQ(parse_error("0 1 0x3\n"), "scn.txt:1: invalid code '0x3'");
  EXPECT_EQ(parse_error("10 1 1\n9.5 2 1\n"),
            "scn.txt:2: time 9.500 us is earlier than the previous event's 10 us (times must not decrease)");
  EXPECT_EQ(parse_error("0 1 1\n5 1 1\n"),
            "scn.txt:2: code 1 does not change probe 1: it is already 1 (line 1)");
  EXPECT_EQ(parse_error("0 2 0\n"), "scn.txt:1: code 0 does not change probe 2: it starts at 0");
  EXPECT_EQ(parse_error("0 1 5\n", ProbeLayout(), 0x05),
            "scn.txt:1: code 5 does not change probe 1: it starts at 5");
  EXPECT_EQ(parse_error("# header\n7 1 1\n7 2 1\n7 1 2\n"),
            "scn.txt:4: probe 1 already changes at 7 us (line 2); one probe changes once per instant");
  EXPECT_EQ(parse_error("# nothing\n\n"), "scn.txt:2: end of file: the scenario has no events");
  EXPECT_EQ(parse_error(""), "scn.txt:1: end of file: the scenario has no events");
}

TEST(Scenario, LoadsFiles) {
  ett::test::TempDir dir;
  const std::string path = dir.file("s.txt");
  std::ofstream(path) << "0 1 1\n200 2 1\n400 1 2\n";
  auto loaded = load_scenario(path, ProbeLayout());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->events.size(), 3u);

  std::ofstream(path) << "0 1 1\n200 2 99\n";
  auto bad = load_scenario(path, ProbeLayout());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, path + ":2: code 99 does not fit probe 2 (4 bits)");

  auto missing = load_scenario(dir.file("none.txt"), ProbeLayout());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
}

TEST(Scenario, PpsEdgesMergeIntoTheScenarioAndKeepTheLineOnItsProbe) {
  // 2x4: D7 is the top line of probe 2; the scenario drives probe 2's lower lines and probe 1.
  auto scenario = parse_scenario("0 1 3\n1 2 5\n1500 2 6\n", "scn", ProbeLayout());  // microseconds
  ASSERT_TRUE(scenario) << scenario.error().message;
  const std::vector<PpsEdge> edges = {{500, true, 100}, {1'000'000, false, 100}, {1'500'000, true, 101}};
  auto merged = with_pps_edges(*scenario, 7, edges, "scn");
  ASSERT_TRUE(merged) << merged.error().message;
  ASSERT_EQ(merged->events.size(), 6u);
  // 0 P1=3; 500 rise; 1000 P2=5 (D7 kept high: 13); 1e6 fall; 1.5e6 P2=6 and, 1 ns later, the rise.
  EXPECT_EQ(merged->events[1].time_ns, 500u);
  EXPECT_EQ(merged->events[1].probe, 2);
  EXPECT_EQ(merged->events[1].code, 8);
  EXPECT_EQ(merged->events[1].pps_edge, 1);
  EXPECT_EQ(merged->events[1].pps_second, 100);
  EXPECT_EQ(merged->events[2].code, 13);
  EXPECT_EQ(merged->events[2].pps_edge, 0);
  EXPECT_EQ(merged->events[3].code, 5);
  EXPECT_EQ(merged->events[3].pps_edge, -1);
  EXPECT_EQ(merged->events[4].code, 6);
  EXPECT_EQ(merged->events[5].time_ns, 1'500'001u);
  EXPECT_EQ(merged->events[5].code, 14);
  EXPECT_EQ(merged->events[5].pps_second, 101);
  EXPECT_EQ(merged->events[5].lines, 0xE3);
}

TEST(Scenario, PpsLineTheScenarioDrivesIsRefused) {
  auto scenario = parse_scenario("0 2 8\n", "scn", ProbeLayout());
  ASSERT_TRUE(scenario);
  const std::vector<PpsEdge> edges = {{500, true, 1}};
  auto merged = with_pps_edges(*scenario, 7, edges, "scn");
  ASSERT_FALSE(merged);
  EXPECT_NE(merged.error().message.find("changes D7, the --pps-line"), std::string::npos)
      << merged.error().message;
  auto high = parse_scenario("0 1 1\n", "scn", ProbeLayout(), 0x80);
  ASSERT_TRUE(high);
  EXPECT_FALSE(with_pps_edges(*high, 7, edges, "scn"));
}

}  // namespace
}  // namespace ett::host
