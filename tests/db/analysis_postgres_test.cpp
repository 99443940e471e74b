// analysis_postgres_test.cpp: every `ett analyze`, `ett export` and `ett report` on PostgreSQL gives what it
// gives on SQLite: the golden cases (tests/golden/cases.txt) run through the real binary against a throwaway
// server and are held to the same files, the precision table is stored there, and the HTML reports are
// byte-identical.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "db/postgres.h"
#include "golden/golden_cases.h"
#include "support/pg_server.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

using host::ThrowawayPostgres;

class AnalysisOnPostgres : public ::testing::Test {
 protected:
  // One server, one disk, the same disk loaded into both engines.
  static void SetUpTestSuite() {
    auto started = ThrowawayPostgres::start();
    ASSERT_TRUE(started) << started.error().message;
    s_server = new ThrowawayPostgres(std::move(*started));
    auto admin = host::open_postgres_database(s_server->uri());
    ASSERT_TRUE(admin) << admin.error().message;
    ASSERT_TRUE((*admin)->run_script("CREATE DATABASE analysis"));
    s_pg = "postgresql:///analysis?host=" + s_server->directory() + "&user=ett";
    s_dir = new TempDir;
    s_sqlite = "sqlite:" + s_dir->file("traces.db");
    golden::write_disk(s_dir->file("trace.img"));
    for (const std::string& db : {s_pg, s_sqlite}) {
      const golden::Run load = golden::ett({"load", s_dir->file("trace.img"), "--all", "--db", db});
      ASSERT_EQ(load.status, 0) << db << ": " << load.out << load.err;
      const golden::Run precision = golden::ett({"analyze", "precision", "--trace", "2", "--db", db});
      ASSERT_EQ(precision.status, 0) << db << ": " << precision.err;
    }
  }
  static void TearDownTestSuite() {
    delete s_dir;
    delete s_server;
    s_dir = nullptr;
    s_server = nullptr;
  }

  // `ett ARGS --db DB`.
  static golden::Run ett(std::vector<std::string> args, const std::string& db) {
    args.push_back("--db");
    args.push_back(db);
    return golden::ett(args);
  }

  static ThrowawayPostgres* s_server;
  static TempDir* s_dir;
  static std::string s_pg, s_sqlite;
};

ThrowawayPostgres* AnalysisOnPostgres::s_server = nullptr;
TempDir* AnalysisOnPostgres::s_dir = nullptr;
std::string AnalysisOnPostgres::s_pg, AnalysisOnPostgres::s_sqlite;

TEST_F(AnalysisOnPostgres, EveryGoldenCaseGivesTheSameOutputOnBothEngines) {
  const auto cases = golden::read_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const golden::Case& c : cases) {
    SCOPED_TRACE("tests/golden/cases.txt:" + std::to_string(c.line) + " " + c.golden);
    golden::Run on_pg, on_sqlite;
    const std::string pg = golden::output_of(c, s_pg, s_dir->file(""), on_pg);
    ASSERT_EQ(on_pg.status, 0) << on_pg.err;
    const std::string sqlite = golden::output_of(c, s_sqlite, s_dir->file(""), on_sqlite);
    ASSERT_EQ(on_sqlite.status, 0) << on_sqlite.err;
    EXPECT_FALSE(pg.empty());
    EXPECT_EQ(pg, sqlite);
    EXPECT_EQ(pg, slurp(golden::kDir / c.golden));
  }
}

// analysis_precision on PostgreSQL: the same rows (doubles compared as numbers: the engines print them
// apart).
TEST_F(AnalysisOnPostgres, PrecisionIsStoredOnBothEngines) {
  const std::vector<std::string> sql = {"sql", "--csv",
                                        "SELECT trace_id, coverage, tau_ns, epsilon_ns, pi_ns, steps FROM "
                                        "analysis_precision ORDER BY coverage"};
  auto rows = [&](const std::string& db) {
    const golden::Run run = ett(sql, db);
    EXPECT_EQ(run.status, 0) << run.err;
    std::vector<std::vector<double>> table;
    std::istringstream lines(run.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "trace_id,coverage,tau_ns,epsilon_ns,pi_ns,steps");
    while (std::getline(lines, line)) {
      std::vector<double> row(6);
      EXPECT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf", &row[0], &row[1], &row[2], &row[3],
                            &row[4], &row[5]),
                6)
          << line;
      table.push_back(row);
    }
    return table;
  };
  const auto pg = rows(s_pg), sqlite = rows(s_sqlite);
  ASSERT_EQ(pg.size(), 3u);
  ASSERT_EQ(pg.size(), sqlite.size());
  for (size_t i = 0; i < pg.size(); ++i)
    for (size_t k = 0; k < 6; ++k)
      EXPECT_NEAR(pg[i][k], sqlite[i][k], 1e-9 * std::abs(sqlite[i][k])) << i << "," << k;
  EXPECT_EQ(pg[2][1], 1.0);
  EXPECT_DOUBLE_EQ(pg[2][2], 2000);  // the largest step: 6000 ticks at 3 GHz
  EXPECT_DOUBLE_EQ(pg[2][4], 2000 + 1 / 3.0);
}

// The reports (summary, precision of the machine, timeline, durations, fit plot) are the same page on both.
TEST_F(AnalysisOnPostgres, ReportsAreTheSameOnBothEngines) {
  const std::vector<std::vector<std::string>> reports = {
      {"report", "--trace", "1", "--from", "1", "--to", "2", "--pair", "fifo", "--size-of-code",
       "1=16,2=32,3=48,4=64,5=80"},
      {"report", "--trace", "2"},
      {"report", "--trace", "3"},
  };
  int n = 0;
  for (const auto& args : reports) {
    std::string pages[2];
    for (int engine = 0; engine < 2; ++engine) {
      const std::string path = s_dir->file("report-" + std::to_string(n++) + ".html");
      auto with_output = args;
      with_output.insert(with_output.end(), {"-o", path});
      const golden::Run run = ett(with_output, engine ? s_sqlite : s_pg);
      ASSERT_EQ(run.status, 0) << run.err;
      pages[engine] = slurp(path);
    }
    EXPECT_GT(pages[0].size(), 1000u);
    EXPECT_EQ(pages[0], pages[1]) << args[2];
    if (args[2] == "1") {
      EXPECT_EQ(pages[0].find("No fit"), std::string::npos) << "the fit plot is drawn";
    } else if (args[2] == "2") {
      EXPECT_NE(pages[0].find("2000.3"), std::string::npos) << "pi at 100 % in the precision table";
    }
  }
}

TEST_F(AnalysisOnPostgres, BadInputOnPostgres) {
  const golden::Run missing = ett({"analyze", "intervals", "--trace", "99"}, s_pg);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no trace 99 in the database"), std::string::npos) << missing.err;
  const golden::Run empty = ett({"export", "--format", "csv"}, s_pg);  // --trace defaults to the newest: 5
  EXPECT_EQ(empty.status, 1);
  EXPECT_NE(empty.err.find("trace 5 (golden session 5) has no events"), std::string::npos) << empty.err;
  // Counters by probe and time buckets, counted as the trace is read: a trace without events is refused there
  // too, on both engines.
  for (const std::string& db : {s_pg, s_sqlite})
    for (const char* by : {"probe", "time:1ms"}) {
      const golden::Run counted = ett({"analyze", "histogram", "--by", by, "--match", "XXXX1XXX"}, db);
      EXPECT_EQ(counted.status, 1) << db << " " << by;
      EXPECT_NE(counted.err.find("trace 5 (golden session 5) has no events"), std::string::npos)
          << counted.err;
    }
}

}  // namespace
}  // namespace ett::test
