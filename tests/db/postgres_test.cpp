// postgres_test.cpp: the trace database on a real, throwaway PostgreSQL server, and the `ett` commands
// (load, query, sql, label, synth) on both engines. Label `db`.
#include "db/postgres.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "db/loader.h"
#include "db/queries.h"
#include "image/synth.h"
#include "support/pg_server.h"
#include "support/test_disk_writer.h"

namespace {

using namespace ett::host;
namespace f = ett::format;

// One server for the whole executable: starting one takes a few seconds.
ThrowawayPostgres* g_server = nullptr;

class PostgresEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto started = ThrowawayPostgres::start();
    ASSERT_TRUE(started) << started.error().message;
    m_server = std::make_unique<ThrowawayPostgres>(std::move(*started));
    g_server = m_server.get();
  }
  void TearDown() override {
    g_server = nullptr;
    m_server.reset();
  }

 private:
  std::unique_ptr<ThrowawayPostgres> m_server;
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

// A fresh database per test, so that tests do not see each other's traces.
std::string fresh_database(const std::string& name) {
  auto admin = open_postgres_database(g_server->uri());
  if (!admin) throw std::runtime_error(admin.error().message);
  (void)(*admin)->run_script("DROP DATABASE IF EXISTS " + name);
  auto created = (*admin)->run_script("CREATE DATABASE " + name);
  if (!created) throw std::runtime_error(created.error().message);
  return "postgresql:///" + name + "?host=" + g_server->directory() + "&user=ett";
}

int64_t count(Database& db, const std::string& sql) {
  auto table = db.query(sql, {});
  if (!table) throw std::runtime_error(table.error().message);
  return std::stoll(table->rows.at(0).at(0).value());
}

struct CommandResult {
  int status = -1;
  std::string out;
};

// Runs the real `ett` binary; stderr goes along with stdout.
CommandResult ett(const std::string& args) {
  CommandResult result;
  std::FILE* pipe = ::popen((std::string(ETT_BIN_DIR) + "/ett " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buffer;
  size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), got);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class PostgresLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_server, nullptr);
    ASSERT_TRUE(write_synth_capture(image, {30'000, 21, f::Layout::Double2x4}));
    ASSERT_TRUE(write_synth_capture(image, {2'000, 22, f::Layout::Quad4x2}));
  }
  ett::test::TempDir dir;
  std::string image = dir.file("trace.img");
};

TEST_F(PostgresLoad, BinaryCopyLoadsTheSameRowsAsSqlite) {
  const std::string url = fresh_database("same_rows");
  auto pg = open_database(url);
  ASSERT_TRUE(pg) << pg.error().message;
  auto sqlite = open_database("sqlite:" + dir.file("t.db"));
  ASSERT_TRUE(sqlite);
  auto into_pg = load_image(**pg, {image, std::nullopt, true});
  ASSERT_TRUE(into_pg) << into_pg.error().message;
  ASSERT_TRUE(load_image(**sqlite, {image, std::nullopt, true}));
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM events"), 32'000);
  // Every named query gives the same text on both engines.
  for (const NamedQuery& query : named_queries()) {
    std::vector<std::string> args;
    if (std::string(query.name) == "event") args = {"17000"};
    if (std::string(query.name) == "window") args = {"1000000", "3000000"};
    if (std::string(query.name) == "probe") args = {"1"};
    if (std::string(query.name) == "traces") continue;  // loaded_at differs
    auto a = run_named_query(**pg, query, 1, args);
    auto b = run_named_query(**sqlite, query, 1, args);
    ASSERT_TRUE(a) << query.name << ": " << a.error().message;
    ASSERT_TRUE(b) << query.name << ": " << b.error().message;
    EXPECT_FALSE(a->rows.empty()) << query.name;
    EXPECT_EQ(a->columns, b->columns) << query.name;
    EXPECT_EQ(a->rows, b->rows) << query.name;
  }
  auto header =
      (*pg)->query("SELECT session, layout, event_count, tsc_hz, health FROM traces ORDER BY trace_id", {});
  auto same = (*sqlite)->query(
      "SELECT session, layout, event_count, tsc_hz, health FROM traces ORDER BY trace_id", {});
  ASSERT_TRUE(header && same);
  EXPECT_EQ(header->rows, same->rows);
  EXPECT_EQ(*header->rows.at(1).at(1), "4x2");
}

// Every event of a trace through the typed reader (db/event_reader.h): seq, probe, code, tsc, time_ns (-1 for
// NULL) and lines per row, and how many batches they came in.
struct ReadBack {
  std::vector<std::array<int64_t, 6>> rows;
  size_t batches = 0;
};
ReadBack read_back(Database& db, int64_t trace) {
  ReadBack back;
  auto read = db.read_events(trace, [&](std::span<const EventRow> rows) -> Status {
    ++back.batches;
    for (const EventRow& r : rows)
      back.rows.push_back({static_cast<int64_t>(r.seq), r.probe, r.code, static_cast<int64_t>(r.tsc),
                           r.has_time_ns ? r.time_ns : -1, r.lines});
    return {};
  });
  if (!read) throw std::runtime_error(read.error().message);
  return back;
}

TEST_F(PostgresLoad, TypedReaderGivesBothEnginesTheSameRowsAndStopsAtTheFirstError) {
  {
    ett::test::TestDiskWriter writer(image);  // a third session without a TSC rate: NULL times
    ett::test::SessionSpec spec;
    spec.records = ett::test::make_records(700);
    spec.tsc_hz = 0;
    writer.append(spec);
  }
  const std::string url = fresh_database("typed_reader");
  auto pg = open_database(url);
  ASSERT_TRUE(pg) << pg.error().message;
  auto sqlite = open_database("sqlite:" + dir.file("t.db"));
  ASSERT_TRUE(sqlite);
  ASSERT_TRUE(load_image(**pg, {image, std::nullopt, true}));
  ASSERT_TRUE(load_image(**sqlite, {image, std::nullopt, true}));
  for (int64_t trace : {1, 2, 3}) {
    const ReadBack a = read_back(**pg, trace), b = read_back(**sqlite, trace);
    EXPECT_EQ(a.rows, b.rows) << "trace " << trace;
    // The text query's rows, as the analyses read them before: the same values.
    auto text = (*sqlite)->query(
        "SELECT seq, probe, code, tsc, coalesce(time_ns, -1), lines FROM events WHERE trace_id = $1 ORDER BY "
        "seq",
        std::vector<SqlValue>{trace});
    ASSERT_TRUE(text);
    ASSERT_EQ(text->rows.size(), b.rows.size());
    for (size_t i = 0; i < b.rows.size(); ++i)
      for (size_t c = 0; c < 6; ++c) ASSERT_EQ(*text->rows[i][c], std::to_string(b.rows[i][c])) << i;
  }
  EXPECT_EQ(read_back(**pg, 1).rows.size(), 30'000u);
  EXPECT_EQ(read_back(**pg, 1).batches, (30'000 + kEventBatchRows - 1) / kEventBatchRows);
  EXPECT_EQ(read_back(**pg, 3).rows.back()[4], -1);
  // A sink's error ends the read with that error, and the connection still answers.
  for (Database* db : {pg->get(), sqlite->get()}) {
    size_t calls = 0;
    auto stopped = db->read_events(1, [&](std::span<const EventRow>) -> Status {
      ++calls;
      return make_error(ErrorKind::Usage, "enough");
    });
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().message, "enough");
    EXPECT_EQ(calls, 1u);
    EXPECT_EQ(count(*db, "SELECT count(*) FROM events WHERE trace_id = 2"), 2'000);
  }
}

TEST_F(PostgresLoad, LoadingAgainChangesNothing) {
  const std::string url = fresh_database("again");
  auto db = open_database(url);
  ASSERT_TRUE(db);
  auto first = load_image(**db, {image, 1, false});
  ASSERT_TRUE(first) << first.error().message;
  auto again = load_image(**db, {image, 1, false});
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)[0].already_loaded);
  EXPECT_EQ((*again)[0].trace_id, (*first)[0].trace_id);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM traces"), 1);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 30'000);
}

TEST_F(PostgresLoad, AKilledLoadLeavesNothing) {
  const std::string url = fresh_database("killed");
  ASSERT_TRUE(open_database(url));  // the schema exists before the child starts
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = open_database(url);
    (void)load_image(**db, {image, 1, false}, [](uint32_t, uint64_t done, uint64_t total) {
      if (done >= total / 2) ::_exit(42);  // mid-COPY: half the events are on the server
      return true;
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 42);
  auto db = open_database(url);
  ASSERT_TRUE(db);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 0);
  auto loaded = load_image(**db, {image, 1, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE((*loaded)[0].already_loaded);
}

TEST_F(PostgresLoad, CommandsOnBothEngines) {
  for (const std::string& url : {"sqlite:" + dir.file("cli.db"), fresh_database("cli")}) {
    SCOPED_TRACE(url);
    const std::string db = " --db '" + url + "'";
    auto load = ett("load " + image + " --all" + db);
    ASSERT_EQ(load.status, 0) << load.out;
    EXPECT_NE(load.out.find("loaded as trace 2: 2000 events"), std::string::npos) << load.out;
    auto again = ett("load " + image + " --session 1" + db);
    EXPECT_EQ(again.status, 0);
    EXPECT_NE(again.out.find("already loaded as trace 1: nothing changed"), std::string::npos) << again.out;

    // --trace defaults to the newest trace (2, layout 4x2: probes 1-4).
    auto label = ett("label --probe 3 'node C'" + db);
    ASSERT_EQ(label.status, 0) << label.out;
    auto probes = ett("query probes --csv" + db);
    EXPECT_EQ(probes.out, "probe,label\n1,\n2,\n3,node C\n4,\n");
    EXPECT_NE(ett("label --probe 9 x" + db).status, 0);

    auto event = ett("query event 0 --trace 1 --csv" + db);
    ASSERT_EQ(event.status, 0) << event.out;
    EXPECT_EQ(event.out.rfind("trace_id,seq,probe,label,code,lines,tsc,time_ns,", 0), 0u) << event.out;
    auto sql = ett("sql 'SELECT count(*) AS n FROM events WHERE trace_id = 1'" + db);
    EXPECT_EQ(sql.out, "    n\n-----\n30000\n(1 row)\n");
    auto bad = ett("sql 'SELECT nope FROM events'" + db);
    EXPECT_EQ(bad.status, 1);
    EXPECT_NE(bad.out.find("nope"), std::string::npos) << bad.out;
    EXPECT_EQ(ett("query nosuch" + db).status, 1);
  }
}

}  // namespace
