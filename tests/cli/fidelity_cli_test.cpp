// fidelity_cli_test.cpp: `ett fidelity` through the real binary on a synthetic capture and a sent log made
// to fit it (each write a few ticks before its stamp, on a host clock offset from the guest's), every format
// parsed, and its refusals; `-o` of ls and sql.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

using nlohmann::json;

constexpr int64_t kOffset = 7'000'000'000;  // host TSC = guest TSC + this (plus each write's lead)
constexpr uint64_t kLeadTicks = 50;         // the fastest write: this many ticks before its stamp

class FidelityCliTest : public ::testing::Test {
 protected:
  EttRun ett(const std::vector<std::string>& args) { return run_ett_in(m_dir.file(""), args); }
  std::string path(const std::string& name) const { return m_dir.file(name); }

  // A synthetic capture on IMAGE, and NAME.csv + NAME.run.json as `ett qemu run` would have written them:
  // each write leads its stamp by kLeadTicks + (stamp % 7) * 10 ticks; every 100th write (from the 6th) was
  // held back by pacing for i us. Returns the capture's events (ett extract --format json).
  json make_run(const std::string& image, const std::string& name, uint64_t seed, int64_t offset = kOffset) {
    EXPECT_EQ(ett({"synth", path(image), "--events", "1000", "--seed", std::to_string(seed)}).status, 0);
    const json events = json::parse(ett({"extract", path(image), "--format", "json"}).out);
    std::string csv =
        "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,guest_tsc_before,"
        "held_back,utc_ns,pps_edge,pps_second,held_ns\n";
    for (size_t i = 0; i < events.size(); ++i) {
      const json& event = events[i];
      // Events of one poll (one stamp) share their lead: their writes stay in capture order.
      const uint64_t tsc = event.at("tsc").get<uint64_t>();
      const uint64_t before = tsc + offset - kLeadTicks - (tsc % 7) * 10;
      const bool held = i % 100 == 5;
      csv += std::to_string(i) + "," + event.at("probe").dump() + "," + event.at("code").dump() + "," +
             event.at("lines").dump() + "," + event.at("time_ns").dump() + "," + event.at("time_ns").dump() +
             "," + std::to_string(before + 20) + "," + std::to_string(before) + ",0,0," + (held ? "1" : "0") +
             ",,,," + std::to_string(held ? i * 1000 : 0) + "\n";
    }
    std::ofstream(path(name + ".csv")) << csv;
    const json ls = json::parse(ett({"ls", path(image), "--format", "json"}).out).at(0);
    const json run = {{"format", "ett-sent-run"},
                      {"version", 1},
                      {"machine", 1},
                      {"machines", 1},
                      {"disk", path(image)},
                      {"session", ls.at("session")},
                      {"guest_clock", false},
                      {"offset_low_ticks", offset - 5'000'000},
                      {"offset_high_ticks", offset + 1000},
                      {"origin_tsc", 0}};
    std::ofstream(path(name + ".run.json")) << run.dump() << "\n";
    return events;
  }

  TempDir m_dir;
};

void expect_one_line_error(const EttRun& run, const std::string& words) {
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.err.rfind("ett: ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(FidelityCliTest, RecomputesTheReportInEveryFormat) {
  const json events = make_run("t.img", "sent", 3);
  const double hz = json::parse(ett({"ls", path("t.img"), "--format", "json"}).out).at(0).at("tsc_hz");

  const EttRun run = ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--format", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const json array = json::parse(run.out);
  ASSERT_EQ(array.size(), 1u);
  const json& report = array.at(0);
  EXPECT_EQ(report.at("sent"), events.size());
  EXPECT_EQ(report.at("captured"), events.size());
  EXPECT_EQ(report.at("matched"), events.size());
  EXPECT_EQ(report.at("lost"), 0);
  EXPECT_EQ(report.at("unexpected"), 0);
  EXPECT_EQ(report.at("out_of_order"), 0);
  EXPECT_EQ(report.at("clean"), true);
  EXPECT_EQ(report.at("guest_clock"), false);
  EXPECT_EQ(report.at("tsc_hz"), hz);
  // The fastest write is latency 0: the offset is the one the log was made with, less the lead.
  EXPECT_EQ(report.at("offset_ticks"), kOffset - static_cast<int64_t>(kLeadTicks));
  EXPECT_NEAR(report.at("latency_max_ns").get<double>(), 60 * 1e9 / hz, 0.051);
  EXPECT_EQ(report.at("held_back"), 10);
  EXPECT_EQ(report.at("held_back_max_ns"), 905'000.0);
  // The schedule is the capture's own times, in whole ns: off by the rounding alone.
  EXPECT_LE(report.at("interval_error_max_ns").get<double>(), 1.0);
  EXPECT_LE(report.at("schedule_error_max_ns").get<double>(), 1.0);
  EXPECT_TRUE(report.at("after_end").is_number());

  const std::vector<std::string> jsonl =
      lines_of(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--format", "jsonl"}).out);
  ASSERT_EQ(jsonl.size(), 1u);
  EXPECT_EQ(json::parse(jsonl[0]), report);

  const std::vector<std::string> csv =
      lines_of(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--format", "csv"}).out);
  ASSERT_EQ(csv.size(), 2u);
  const std::vector<std::string> keys = split_csv_line(csv[0]), values = split_csv_line(csv[1]);
  ASSERT_EQ(keys.size(), report.size());
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(json::parse(values[i]), report.at(keys[i])) << keys[i];

  const EttRun text = ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv")});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(
      text.out.rfind("  fidelity:       sent 1000, captured 1000, lost 0, unexpected 0, out of order 0", 0),
      0u)
      << text.out;
  EXPECT_NE(text.out.find("10 event(s) held back by pacing"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("by up to 905.0 us"), std::string::npos) << text.out;

  // -o FILE, never over an existing file without --force; -o - is standard output.
  ASSERT_EQ(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--format", "json", "-o",
                 path("f.json")})
                .status,
            0);
  EXPECT_EQ(json::parse(slurp(path("f.json"))), array);
  expect_one_line_error(
      ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "-o", path("f.json")}),
      "already exists");
  EXPECT_EQ(json::parse(slurp(path("f.json"))), array) << "not overwritten";
  EXPECT_EQ(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "-o", path("f.json"), "--force"})
                .status,
            0);
  EXPECT_EQ(slurp(path("f.json")), text.out);
  EXPECT_EQ(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "-o", "-"}).out, text.out);
  EXPECT_FALSE(std::filesystem::exists(path("-")));
}

TEST_F(FidelityCliTest, CheckFailsWithSixWhenAWriteIsMissing) {
  make_run("t.img", "sent", 4);
  EXPECT_EQ(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--check"}).status, 0);
  std::vector<std::string> lines = lines_of(slurp(path("sent.csv")));
  lines.erase(lines.begin() + 300);
  std::ofstream edited(path("edited.csv"));
  for (const std::string& line : lines) edited << line << "\n";
  edited.close();
  std::filesystem::copy_file(path("sent.run.json"), path("edited.run.json"));
  const EttRun unchecked =
      ett({"fidelity", path("t.img"), "--sent-log", path("edited.csv"), "--format", "json"});
  EXPECT_EQ(unchecked.status, 0) << unchecked.err;
  EXPECT_EQ(json::parse(unchecked.out).at(0).at("unexpected"), 1);
  EXPECT_EQ(json::parse(unchecked.out).at(0).at("clean"), false);
  const EttRun checked = ett({"fidelity", path("t.img"), "--sent-log", path("edited.csv"), "--check"});
  EXPECT_EQ(checked.status, 6);
  EXPECT_NE(checked.err.find("--check: the capture lost, invented or reordered events"), std::string::npos)
      << checked.err;
}

// Several machines: one report each, machines 2..N with where `ett analyze align` should put them.
TEST_F(FidelityCliTest, MachinesAreNumberedAsTheRunNumberedThem) {
  make_run("t-1.img", "sent-1", 5);
  make_run("t-2.img", "sent-2", 6, kOffset + 12'345);
  const EttRun run =
      ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--machines", "2", "--format", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const json array = json::parse(run.out);
  ASSERT_EQ(array.size(), 2u);
  EXPECT_FALSE(array[0].contains("truth_offset_ns"));
  const json one = json::parse(ett({"ls", path("t-1.img"), "--format", "json"}).out).at(0);
  const json two = json::parse(ett({"ls", path("t-2.img"), "--format", "json"}).out).at(0);
  const double hz1 = one.at("tsc_hz"), hz2 = two.at("tsc_hz");
  const double ticks =
      12'345.0 + (two.at("capture_start_tsc").get<double>() - one.at("capture_start_tsc").get<double>());
  EXPECT_NEAR(array[1].at("truth_offset_ns").get<double>(), ticks * 1e9 / hz1, 0.051);
  EXPECT_NEAR(array[1].at("truth_drift_ppm").get<double>(), (hz2 / hz1 - 1) * 1e6, 1e-6);
  const std::string text =
      ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--machines", "2"}).out;
  EXPECT_NE(text.find("  machine 2:      1000 events sent, session 1 on " + path("t-2.img")),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  align truth:    t_1 = t_2 "), std::string::npos) << text;
  const std::vector<std::string> csv = lines_of(
      ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--machines", "2", "--format", "csv"})
          .out);
  ASSERT_EQ(csv.size(), 3u);
  const std::vector<std::string> keys = split_csv_line(csv[0]);
  EXPECT_EQ(keys.back(), "truth_drift_ppm");
  EXPECT_EQ(split_csv_line(csv[1]).back(), "") << "machine 1 has no truth: an empty field";
}

// What the log or its .run.json lacks is said, or the run refused with one line.
TEST_F(FidelityCliTest, BadInputIsOneLineAndAnOldLogStillWorks) {
  make_run("t.img", "sent", 8);
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("missing.csv")}), "missing.csv");
  std::ofstream(path("few.csv")) << "index,probe,code\n0,1,2\n";
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("few.csv")}),
                        "no column 'scheduled_ns'");
  std::ofstream(path("other.csv")) << "seq,probe,code,tsc,time_ns\n";
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("other.csv")}), "not a sent log");
  std::string text = slurp(path("sent.csv"));
  text.replace(text.find("\n3,") + 3, 1, "x");
  std::ofstream(path("bad.csv")) << text;
  std::filesystem::copy_file(path("sent.run.json"), path("bad.run.json"));
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("bad.csv")}),
                        "bad.csv:5: column probe");
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--session", "9"}),
                        "session 9");
  expect_one_line_error(ett({"fidelity", path("nothing.img"), "--sent-log", path("sent.csv")}),
                        "nothing.img");
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("sent.csv"), "--format", "xml"}),
                        "--format 'xml'");
  std::ofstream(path("broken.run.json")) << "{\"format\": \"something else\"}\n";
  std::filesystem::copy_file(path("sent.csv"), path("broken.csv"));
  expect_one_line_error(ett({"fidelity", path("t.img"), "--sent-log", path("broken.csv")}),
                        "broken.run.json");

  // A log without its .run.json (and from before the held_ns column): a warning, the offset estimated from
  // the codes (right here: nothing was lost), and the hold's length unknown: null.
  std::string old;
  for (const std::string& line : lines_of(slurp(path("sent.csv"))))
    old += line.substr(0, line.rfind(',')) + "\n";
  std::ofstream(path("old.csv")) << old;
  const EttRun run = ett({"fidelity", path("t.img"), "--sent-log", path("old.csv"), "--format", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("old.run.json: not found"), std::string::npos) << run.err;
  const json report = json::parse(run.out).at(0);
  EXPECT_EQ(report.at("matched"), 1000);
  EXPECT_EQ(report.at("lost"), 0);
  EXPECT_EQ(report.at("held_back"), 10);
  EXPECT_TRUE(report.at("held_back_max_ns").is_null());
  EXPECT_NE(
      ett({"fidelity", path("t.img"), "--sent-log", path("old.csv")}).out.find("(for how long: not logged)"),
      std::string::npos);
}

TEST_F(FidelityCliTest, LsAndSqlWriteToOutputFiles) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "100"}).status, 0);
  ASSERT_EQ(ett({"load", path("t.img"), "--db", "sqlite:" + path("t.db")}).status, 0);
  const EttRun sql = ett({"sql", "SELECT count(*) AS n FROM events", "--format", "json", "--db",
                          "sqlite:" + path("t.db"), "-o", path("n.json")});
  ASSERT_EQ(sql.status, 0) << sql.err;
  EXPECT_EQ(sql.out, "");
  EXPECT_EQ(json::parse(slurp(path("n.json"))).at(0).at("n"), 100);
  expect_one_line_error(ett({"sql", "SELECT 1 AS one", "--format", "json", "--db", "sqlite:" + path("t.db"),
                             "-o", path("n.json")}),
                        "already exists");
  EXPECT_EQ(json::parse(slurp(path("n.json"))).at(0).at("n"), 100) << "not overwritten";
  ASSERT_EQ(ett({"sql", "SELECT 1 AS one", "--format", "csv", "--db", "sqlite:" + path("t.db"), "-o",
                 path("n.json"), "--force"})
                .status,
            0);
  EXPECT_EQ(slurp(path("n.json")), "one\n1\n");
  const EttRun ls = ett({"ls", path("t.img"), "--format", "csv", "-o", path("ls.csv")});
  ASSERT_EQ(ls.status, 0) << ls.err;
  EXPECT_EQ(slurp(path("ls.csv")), ett({"ls", path("t.img"), "--format", "csv", "-o", "-"}).out);
}

}  // namespace
}  // namespace ett::test
