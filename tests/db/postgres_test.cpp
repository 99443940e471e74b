// postgres_test.cpp: the trace database on a real, throwaway PostgreSQL server, and the `ett` commands
// (load, query, sql, label, synth) on both engines. Label `db`.
#include "db/postgres.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "analysis/input.h"
#include "db/event_packs.h"
#include "db/loader.h"
#include "db/queries.h"
#include "db/schema.h"
#include "export/csv.h"
#include "export/perfetto.h"
#include "image/session_writer.h"
#include "image/synth.h"
#include "image/trace_image.h"
#include "support/child_peak.h"
#include "support/db_fixtures.h"
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

using ett::test::ett;

// Loads a session of `image` into `url` in a child process that exits (status 42) once half the events are
// sent: mid-COPY, as a killed `ett load`. Returns the child's exit status (-1 when it did not exit).
int load_and_die_half_way(const std::string& url, const std::string& image, std::optional<uint32_t> session) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    auto db = open_database(url);
    (void)load_image(**db, {image, session, false}, [](uint32_t, uint64_t done, uint64_t total) {
      if (done >= total / 2) ::_exit(42);
      return true;
    });
    ::_exit(0);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
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
    if (std::string(query.name) == "losses") continue;  // whole sessions lose nothing (salvage_test.cpp)
    // Through PostgreSQL's cursor: probe 1's rows take several FETCHes.
    auto a = run_named_query(**pg, query, 1, args);
    auto b = run_named_query(**sqlite, query, 1, args);
    if (std::string(query.name) == "probe") {
      EXPECT_GT(b->rows.size(), 3 * 4096u);
    }
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

// The stall table lands in `stalls` on PostgreSQL as on SQLite (same rows).
TEST_F(PostgresLoad, StallsTableHoldsTheSameRowsAsSqlite) {
  const std::string stalled = dir.file("stalled.img");
  ett::test::make_blank_disk(stalled);
  {
    ett::test::TestDiskWriter writer(stalled);
    ett::test::SessionSpec spec;
    const auto records = ett::test::make_records(40);
    spec.records = records;
    spec.stalls = {{1'003'000, 120'000'000}, {1'030'000, 90'000}};
    spec.typical_check_ticks = 30'000;
    spec.longest_check_ticks = 120'000'000;
    writer.append(spec);
  }
  auto pg = open_database(fresh_database("stalls"));
  ASSERT_TRUE(pg) << pg.error().message;
  auto sqlite = open_database("sqlite:" + dir.file("s.db"));
  ASSERT_TRUE(sqlite);
  ASSERT_TRUE(load_image(**pg, {stalled, std::nullopt, true}));
  ASSERT_TRUE(load_image(**sqlite, {stalled, std::nullopt, true}));
  const std::string sql =
      "SELECT trace_id, start_ns, length_ns, start_tsc, length_ticks FROM stalls ORDER BY start_tsc";
  auto a = (*pg)->query(sql, {});
  auto b = (*sqlite)->query(sql, {});
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->rows.size(), 2u);
  EXPECT_EQ(a->rows, b->rows);
  EXPECT_EQ(*a->rows[0][2], "40000000");
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
  // Seqs at the top of what PostgreSQL's read packs with the small columns (2^39 - 1: trace 4) and beyond it
  // (trace 5: read as fields of their own), with every small column at its extremes.
  for (Database* db : {pg->get(), sqlite->get()})
    for (const auto& [trace, first] : {std::pair{4, (int64_t{1} << 39) - 1000}, {5, (int64_t{1} << 40) - 7}})
      ASSERT_TRUE(db->run_script(fmt::format(
          "INSERT INTO events (trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux) WITH RECURSIVE "
          "k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < 999) SELECT {}, {} + n, 1 + n % 8, 255 "
          "- "
          "n % 256, 4611686018427387904 + n * 1000, n, (n * 7) % 256, 0, 0 FROM k",
          trace, first)));
  for (int64_t trace : {1, 2, 3, 4, 5}) {
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
  for (int64_t trace : {4, 5}) {
    const ReadBack rows = read_back(**pg, trace);
    ASSERT_EQ(rows.rows.size(), 1'000u) << "trace " << trace;
    EXPECT_EQ(rows.rows.back()[0], trace == 4 ? (int64_t{1} << 39) - 1 : (int64_t{1} << 40) + 992) << trace;
  }
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

// A read without time_ns (what the analyses ask of a trace with a TSC rate) takes the trace's event_packs,
// which the load wrote: the same rows as events gives. A trace without packs is read from events, a damaged
// pack or packs that do not hold all its events an error that says how to get past it, and loading the image
// again writes missing packs.
ReadBack read_without_time(Database& db, int64_t trace) {
  ReadBack back;
  EventColumns columns;
  columns.time_ns = false;
  auto read = db.read_events(
      trace,
      [&](std::span<const EventRow> rows) -> Status {
        ++back.batches;
        for (const EventRow& r : rows)
          back.rows.push_back({static_cast<int64_t>(r.seq), r.probe, r.code, static_cast<int64_t>(r.tsc),
                               r.has_time_ns ? r.time_ns : -1, r.lines});
        return {};
      },
      columns);
  if (!read) throw std::runtime_error(read.error().message);
  return back;
}

TEST_F(PostgresLoad, PackedReadsGiveTheEventsRows) {
  const std::string big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(big, {200'000, 24, f::Layout::Double2x4}));  // two parts
  const std::string url = fresh_database("packs");
  auto db = open_database(url);
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE(load_image(**db, {big, std::nullopt, false}));
  ASSERT_TRUE(load_image(**db, {image, 1, false}));  // trace 2, one part
  ASSERT_TRUE(load_image(**db, {image, 2, false}));  // trace 3
  auto events_rows = [&](int64_t trace) {
    ReadBack back = read_back(**db, trace);
    for (auto& row : back.rows) row[4] = -1;  // time_ns: the packed read leaves it out
    return back.rows;
  };
  const std::map<int64_t, int64_t> sizes = {{1, 200'000}, {2, 30'000}, {3, 2'000}};
  for (const auto& [trace, size] : sizes) {
    EXPECT_EQ(count(**db, fmt::format("SELECT sum(events) FROM event_packs WHERE trace_id = {}", trace)),
              size);
    EXPECT_GT(count(**db, fmt::format("SELECT count(*) FROM event_packs WHERE trace_id = {}", trace)), 1);
    const ReadBack packed = read_without_time(**db, trace);
    ASSERT_EQ(packed.rows.size(), static_cast<size_t>(size));
    EXPECT_EQ(packed.rows, events_rows(trace)) << "trace " << trace;
  }
  EXPECT_EQ(count(**db, fmt::format("SELECT max(length(data)) FROM event_packs")) <= int64_t{kPackBytes},
            true);
  // Which read it was: a pack changed (with its count and seqs kept right) shows in the packed read alone.
  const std::string first_pack =
      "trace_id = 2 AND first_seq = (SELECT min(first_seq) FROM event_packs WHERE trace_id = 2)";
  // Its last byte is the lines of its last event.
  const auto last =
      static_cast<size_t>(count(**db, "SELECT events - 1 FROM event_packs WHERE " + first_pack));
  const int64_t lines = events_rows(2).at(last)[5];
  ASSERT_TRUE((*db)->run_script(
      fmt::format("UPDATE event_packs SET data = set_byte(data, length(data) - 1, {}) WHERE {}", 255 - lines,
                  first_pack)));
  EXPECT_EQ(read_without_time(**db, 2).rows.at(last)[5], 255 - lines);
  EXPECT_EQ(events_rows(2).at(last)[5], lines);
  // Damaged: data cut short; a pack that overlaps the one before.
  ASSERT_TRUE(
      (*db)->run_script("UPDATE event_packs SET data = substring(data FROM 1 FOR 100) WHERE " + first_pack));
  EventColumns no_time;
  no_time.time_ns = false;
  auto damaged = (*db)->read_events(
      2, [](std::span<const EventRow>) -> Status { return {}; }, no_time);
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.error().message.find("event_packs of trace 2: the pack of seqs 0-"), std::string::npos)
      << damaged.error().message;
  EXPECT_NE(damaged.error().message.find(
                "after DELETE FROM event_packs WHERE trace_id = 2 the trace is read from events"),
            std::string::npos)
      << damaged.error().message;
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events WHERE trace_id = 2"), 30'000);  // the connection answers
  ASSERT_TRUE(
      (*db)->run_script("UPDATE event_packs SET first_seq = first_seq - 1 WHERE trace_id = 1 AND first_seq = "
                        "(SELECT max(first_seq) FROM event_packs WHERE trace_id = 1)"));
  // (the last pack now starts at the seq the one before ends with: the synthetic capture's seqs have no gaps)
  auto overlapping = (*db)->read_events(
      1, [](std::span<const EventRow>) -> Status { return {}; }, no_time);
  ASSERT_FALSE(overlapping);
  EXPECT_NE(overlapping.error().message.find("overlaps the one before"), std::string::npos)
      << overlapping.error().message;
  // Packs that do not hold every event: the read stops and says what they hold.
  ASSERT_TRUE((*db)->run_script("DELETE FROM event_packs WHERE trace_id = 3 AND first_seq > 0"));
  const int64_t held = count(**db, "SELECT sum(events) FROM event_packs WHERE trace_id = 3");
  ASSERT_LT(held, 2'000);
  auto short_of_events = (*db)->read_events(
      3, [](std::span<const EventRow>) -> Status { return {}; }, no_time);
  ASSERT_FALSE(short_of_events);
  EXPECT_NE(short_of_events.error().message.find(fmt::format("they hold {} of its 2000 events", held)),
            std::string::npos)
      << short_of_events.error().message;
  // No packs (a trace loaded before event_packs, or packs deleted as the message says): read from events.
  ASSERT_TRUE((*db)->run_script("DELETE FROM event_packs WHERE trace_id = 2 OR trace_id = 3"));
  for (int64_t trace : {2, 3}) EXPECT_EQ(read_without_time(**db, trace).rows, events_rows(trace)) << trace;
  // Loading the image again writes the missing packs.
  auto again = ett("load " + image + " --all --db '" + url + "'");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("but its event_packs hold 0 of its 30000 events"), std::string::npos) << again.out;
  EXPECT_EQ(count(**db, "SELECT sum(events) FROM event_packs WHERE trace_id = 2"), 30'000);
  EXPECT_EQ(count(**db, "SELECT sum(events) FROM event_packs WHERE trace_id = 3"), 2'000);
  for (int64_t trace : {2, 3}) EXPECT_EQ(read_without_time(**db, trace).rows, events_rows(trace)) << trace;
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
  ASSERT_EQ(load_and_die_half_way(url, image, 1), 42);
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

// `ett sql` on PostgreSQL: one statement streams its rows (single-row mode, in batches); a script of several
// runs whole and gives its last statement's rows; errors name the problem, and a sink that fails stops the
// query and leaves the connection usable.
TEST_F(PostgresLoad, ScriptRowsStreamOneStatementAndRunAScriptWhole) {
  auto db = open_database(fresh_database("script_rows"));
  ASSERT_TRUE(db) << db.error().message;
  const std::string select =
      "SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'r' || i END AS text FROM generate_series(1, 10000) i";
  ett::test::CountedRows streamed;
  ASSERT_TRUE((*db)->run_script_rows(select, streamed));
  auto whole = (*db)->query(select, {});
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(streamed.all.table.columns, (std::vector<std::string>{"i", "text"}));
  EXPECT_EQ(streamed.all.table.rows, whole->rows);
  EXPECT_GE(streamed.batches, 3u);

  ett::test::CountedRows script;
  ASSERT_TRUE((*db)->run_script_rows(
      "CREATE TEMP TABLE t AS SELECT generate_series(1, 3) AS a; SELECT a, ';' AS b FROM t", script));
  EXPECT_EQ(script.all.table.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(script.all.table.rows, (std::vector<std::vector<DbValue>>{{"1", ";"}, {"2", ";"}, {"3", ";"}}));

  ett::test::CountedRows none;
  ASSERT_TRUE((*db)->run_script_rows("SELECT 1 AS a; CREATE TEMP TABLE u (a int)", none));
  ASSERT_TRUE((*db)->run_script_rows("VACUUM probes", none));
  EXPECT_TRUE(none.all.table.columns.empty());
  EXPECT_EQ(none.batches, 0u);

  auto syntax = (*db)->run_script_rows("SELEC 1", none);
  ASSERT_FALSE(syntax);
  EXPECT_NE(syntax.error().message.find("syntax error"), std::string::npos) << syntax.error().message;
  auto parameter = (*db)->run_script_rows("SELECT $1", none);
  ASSERT_FALSE(parameter);
  EXPECT_NE(parameter.error().message.find("takes no parameters"), std::string::npos);
  auto copy = (*db)->run_script_rows("COPY probes TO STDOUT", none);
  ASSERT_FALSE(copy);
  EXPECT_NE(copy.error().message.find("COPY"), std::string::npos);

  auto again = open_database(fresh_database("script_rows_refused"));
  ASSERT_TRUE(again);
  ett::test::RefusingRows refusing;
  auto refused = (*again)->run_script_rows("SELECT generate_series(1, 100000000) AS i", refusing);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "no room");
  auto after = (*again)->query("SELECT 2 + 2", {});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(*after->rows.at(0).at(0), "4");
}

// mode=hwlat gap lengths and mode=calibrate step lengths are in aux; flags too. Both stay on PostgreSQL.
TEST_F(PostgresLoad, HwlatAndCalibrateCapturesKeepAuxAndFlags) {
  const std::string modes = dir.file("modes.img");
  ASSERT_TRUE(write_synth_capture(modes, {500, 5, f::Layout::Double2x4}));
  auto writer = SessionWriter::open(modes);
  ASSERT_TRUE(writer);
  std::vector<f::EventRecord> records(4'000);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].tsc = 2'000'000 + i * 100'000;
    records[i].flags = static_cast<uint8_t>(i % 4 == 0);
    records[i].aux = i == 1 ? 0xFFFFFFFFu : static_cast<uint32_t>(40'000 + i * 31);
  }
  for (f::CaptureMode mode : {f::CaptureMode::HwLat, f::CaptureMode::Calibrate}) {
    SessionSpec spec;
    spec.mode = mode;
    spec.records = records;
    ASSERT_TRUE(writer->append(spec));
  }
  auto db = open_database(fresh_database("modes"));
  ASSERT_TRUE(db) << db.error().message;
  auto loaded = load_image(**db, {modes, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  for (int64_t trace : {(*loaded)[1].trace_id, (*loaded)[2].trace_id}) {
    auto rows = (*db)->query("SELECT flags, aux FROM events WHERE trace_id = $1 ORDER BY seq",
                             std::vector<SqlValue>{trace});
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->rows.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      ASSERT_EQ(*rows->rows[i][0], std::to_string(records[i].flags));
      ASSERT_EQ(*rows->rows[i][1], std::to_string(records[i].aux));
    }
  }
  EXPECT_EQ(count(**db, "SELECT version FROM ett_schema"), kSchemaVersion);
}

// A trace of its own partitions: a big one is split in two at a seq, filled by two connections and attached;
// its rows read back as loaded (the already-loaded check hashes every stored row), through both halves.
TEST_F(PostgresLoad, ABigTraceLoadsAsTwoAttachedPartitions) {
  const std::string big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(big, {200'000, 23, f::Layout::Double2x4}));
  const std::string url = fresh_database("parts");
  auto db = open_database(url);
  ASSERT_TRUE(db) << db.error().message;
  auto loaded = load_image(**db, {big, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  const int64_t trace = (*loaded)[0].trace_id;
  auto parts = (*db)->query(
      "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c ON c.oid = "
      "i.inhrelid WHERE i.inhparent = 'events'::regclass AND c.relname <> 'events_default' ORDER BY 1",
      {});
  ASSERT_TRUE(parts) << parts.error().message;
  ASSERT_EQ(parts->rows.size(), 2u);
  EXPECT_EQ(*parts->rows[0][0], "events_t" + std::to_string(trace) + "_0");
  EXPECT_EQ(*parts->rows[1][0], "events_t" + std::to_string(trace) + "_1");
  for (const char* table : {"_0", "_1"})
    EXPECT_GT(count(**db, "SELECT count(*) FROM events_t" + std::to_string(trace) + table), 50'000) << table;
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events_default"), 0);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 200'000);
  // Each part carries the primary key (attached to the parent's) and no other index.
  EXPECT_EQ(count(**db,
                  "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE "
                  "i.inhparent = 'events_pkey'::regclass AND c.relname LIKE 'events\\_t%'"),
            2);
  EXPECT_EQ(
      count(**db,
            "SELECT count(*) FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid WHERE c.relname LIKE "
            "'events\\_t%'"),
      2);
  // Every row, once, in seq order, through the in-order read.
  auto expect_read_in_order = [&] {
    uint64_t rows = 0, next = 0;
    bool in_order = true;
    ASSERT_TRUE((*db)->read_events(trace, [&](std::span<const EventRow> batch) -> Status {
      for (const EventRow& row : batch) in_order = in_order && row.seq == next++;
      rows += batch.size();
      return {};
    }));
    EXPECT_EQ(rows, 200'000u);
    EXPECT_TRUE(in_order);
  };
  expect_read_in_order();
  auto again = load_image(**db, {big, std::nullopt, false});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE((*again)[0].already_loaded);
  EXPECT_EQ((*again)[0].repaired, "");
  // A reload after rows were deleted goes through events into the trace's own partitions.
  ASSERT_TRUE((*db)->run_script("DELETE FROM events WHERE seq % 1000 = 7"));
  auto repaired = load_image(**db, {big, std::nullopt, false});
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_NE((*repaired)[0].repaired, "");
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 200'000);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events_default"), 0);
  // Rows whose new versions an UPDATE put at the end of their partition's heap, after the rows of higher
  // seq: a plain scan meets them out of seq order, and the reader reads the part again in seq order.
  ASSERT_TRUE((*db)->run_script("UPDATE events SET lines = lines WHERE seq % 1000 = 3"));
  const std::string part0 = "events_t" + std::to_string(trace) + "_0";
  EXPECT_GT(count(**db, "SELECT count(*) FROM " + part0 + " WHERE ctid > (SELECT ctid FROM " + part0 +
                            " WHERE seq = (SELECT max(seq) FROM " + part0 + "))"),
            0);
  auto capture = load_capture(**db, trace);
  ASSERT_TRUE(capture) << capture.error().message;
  auto text = (*db)->query("SELECT seq, tsc, probe, code, lines FROM events WHERE trace_id = $1 ORDER BY seq",
                           std::vector<SqlValue>{trace});
  ASSERT_TRUE(text) << text.error().message;
  ASSERT_EQ(capture->events.size(), text->rows.size());
  for (size_t i = 0; i < text->rows.size(); ++i) {
    const AnalysisEvent& event = capture->events[i];
    ASSERT_EQ(std::to_string(event.seq), *text->rows[i][0]) << i;
    ASSERT_EQ(std::to_string(event.tsc), *text->rows[i][1]) << i;
    ASSERT_EQ(std::to_string(event.probe), *text->rows[i][2]) << i;
    ASSERT_EQ(std::to_string(event.code), *text->rows[i][3]) << i;
    ASSERT_EQ(std::to_string(event.lines), *text->rows[i][4]) << i;
  }
  expect_read_in_order();
  // Counted as the packs are read (with a filter: the events that pass it), or from the load's counts (by
  // code or probe without one): the histogram of the whole capture.
  const std::pair<const char*, const char*> counts[] = {
      {"code", ""}, {"probe", ""}, {"code", "XXXXXXX1"}, {"probe", "XXXX1XXX"}};
  for (const auto& [by, match] : counts) {
    const HistogramSpec spec = *parse_histogram_by(by);
    std::optional<TritPattern> filter;
    if (*match) filter = *parse_trits(match);
    const HistogramResult whole = histogram(capture->events, spec, filter);
    auto stored = stored_histogram(**db, capture->info, spec, filter);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(stored->total, 200'000u) << by;
    EXPECT_EQ(stored->matched, whole.matched) << by;
    ASSERT_EQ(stored->rows.size(), whole.rows.size()) << by;
    for (size_t i = 0; i < whole.rows.size(); ++i) {
      EXPECT_EQ(stored->rows[i].label, whole.rows[i].label) << by << " " << i;
      EXPECT_EQ(stored->rows[i].count, whole.rows[i].count) << by << " " << i;
    }
  }
  // A stream that can take its rows back gets the first part through the plain scan too (when the planner
  // scans the heap, it meets the moved rows and tells the stream to start again): every row once, in order.
  uint64_t rows = 0, next = 0, restarts = 0;
  bool in_order = true;
  ASSERT_TRUE((*db)->read_events(
      trace,
      [&](std::span<const EventRow> batch) -> Status {
        for (const EventRow& row : batch) in_order = in_order && row.seq == next++;
        rows += batch.size();
        return {};
      },
      {},
      [&]() -> Status {
        ++restarts;
        rows = next = 0;
        in_order = true;
        return {};
      }));
  EXPECT_LE(restarts, 1u);
  EXPECT_EQ(rows, 200'000u);
  EXPECT_TRUE(in_order);
  // The pairing that streams over it (and starts again with it) pairs what the whole capture pairs.
  auto whole = pair_actions(capture->events, {1, {}}, {2, {}}, 10.0);
  ASSERT_TRUE(whole) << whole.error().message;
  auto streamed = stored_actions(**db, trace, {1, {}}, {2, {}}, PairRule::SameCode, 10.0);
  ASSERT_TRUE(streamed) << streamed.error().message;
  ASSERT_GT(whole->actions.size(), 1000u);
  ASSERT_EQ(streamed->actions.size(), whole->actions.size());
  for (size_t i = 0; i < whole->actions.size(); ++i) {
    ASSERT_EQ(streamed->actions[i].start_seq, whole->actions[i].start_seq) << i;
    ASSERT_EQ(streamed->actions[i].end_seq, whole->actions[i].end_seq) << i;
    ASSERT_EQ(streamed->actions[i].duration_ns, whole->actions[i].duration_ns) << i;
  }
  EXPECT_EQ(streamed->unmatched_starts, whole->unmatched_starts);
  EXPECT_EQ(streamed->unmatched_ends, whole->unmatched_ends);
  // The CSV export streams the same way (ett export): into a file, which it takes back when the stream starts
  // again, it writes the CSV of the whole capture.
  const std::string csv_path = dir.file("streamed.csv");
  {
    auto out = TextOut::open(csv_path, false);
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_TRUE(out->can_rewind());
    std::optional<CsvWriter> writer;
    auto take = [&](std::span<const AnalysisEvent> events) -> Status {
      if (!writer) writer.emplace(*out, nullptr);
      writer->add(events);
      return {};
    };
    auto again = [&]() -> Status {
      writer.reset();
      return out->rewind();
    };
    ASSERT_TRUE(stream_trace_events(**db, *capture, take, again));
    ASSERT_TRUE(out->finish());
  }
  std::ifstream csv(csv_path, std::ios::binary);
  const std::string streamed_csv{std::istreambuf_iterator<char>(csv), {}};
  EXPECT_TRUE(streamed_csv == export_csv(*capture)) << "streamed CSV of " << streamed_csv.size() << " bytes";
  // `ett export --format perfetto` with actions streams the same way, pairing them as the events pass (and
  // again when the stream starts again): the Perfetto JSON of the whole capture and its paired actions.
  const std::string json_path = dir.file("streamed.json");
  const auto exported =
      ett("export --format perfetto --from 1 --to 2 -o '" + json_path + "' --db '" + url + "'");
  ASSERT_EQ(exported.status, 0) << exported.out;
  auto paired = pair_actions(capture->events, {1, {}}, {2, {}}, 0, PairRule::SameCode, Summarize::No);
  ASSERT_TRUE(paired) << paired.error().message;
  std::ifstream json(json_path, std::ios::binary);
  const std::string streamed_json{std::istreambuf_iterator<char>(json), {}};
  EXPECT_TRUE(streamed_json == export_perfetto(*capture, paired->actions))
      << "streamed Perfetto JSON of " << streamed_json.size() << " bytes";
  // So does the protobuf, whose times start at the earliest event (earliest_event_ns: event_blocks, then the
  // least TSC of a block, here on the server).
  auto earliest = earliest_event_ns(**db, capture->info);
  ASSERT_TRUE(earliest) << earliest.error().message;
  double least = capture->events.front().time_ns;
  for (const AnalysisEvent& event : capture->events) least = std::min(least, event.time_ns);
  EXPECT_EQ(*earliest, least);
  const std::string proto_path = dir.file("streamed.pftrace");
  const auto proto =
      ett("export --format perfetto-proto --from 1 --to 2 -o '" + proto_path + "' --db '" + url + "'");
  ASSERT_EQ(proto.status, 0) << proto.out;
  std::ifstream proto_file(proto_path, std::ios::binary);
  const std::string streamed_proto{std::istreambuf_iterator<char>(proto_file), {}};
  EXPECT_TRUE(streamed_proto == export_perfetto_proto(*capture, paired->actions))
      << "streamed Perfetto protobuf of " << streamed_proto.size() << " bytes";
}

// A two-connection load killed half way leaves no rows and no partition; a part table that a dead load's
// second connection had committed (never attached) is dropped by the next load.
TEST_F(PostgresLoad, AKilledTwoPartLoadLeavesNothing) {
  const std::string big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(big, {200'000, 24, f::Layout::Double2x4}));
  const std::string url = fresh_database("killed_parts");
  ASSERT_TRUE(open_database(url));
  ASSERT_EQ(load_and_die_half_way(url, big, std::nullopt), 42);
  auto db = open_database(url);
  ASSERT_TRUE(db);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 0);
  // What a load that died after its second connection's commit leaves: a part table outside events.
  ASSERT_TRUE((*db)->run_script("CREATE TABLE events_t77_1 (LIKE events)"));
  auto loaded = load_image(**db, {big, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(count(**db,
                  "SELECT count(*) FROM pg_class WHERE relname ~ '^events_t[0-9]+_[0-9]+$' AND NOT "
                  "relispartition"),
            0);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 200'000);
}

// A big partial session (a chunk missing before its middle) loads as two parts cut at its middle chunk, each
// fed by a decoder of its own: every good chunk's rows, in the right part, none in events_default.
TEST_F(PostgresLoad, APartialSessionLoadsAsTwoPartsCutAtItsMiddleChunk) {
  const std::string cut_image = dir.file("cut.img");
  ett::test::make_blank_disk(cut_image, 64ull << 20);
  const uint64_t chunks = 80;
  ett::test::SessionSpec spec;
  spec.records = ett::test::make_records(chunks * f::kRecordsPerChunk - 100);
  spec.status = f::SessionStatus::Writing;
  spec.skip_chunk.assign(chunks, false);
  spec.skip_chunk[3] = true;
  ett::test::TestDiskWriter(cut_image).append(spec);
  const uint64_t good = spec.records.size() - f::kRecordsPerChunk;
  ASSERT_GE(good, 131'072u);  // big enough for two parts
  auto db = open_database(fresh_database("partial_parts"));
  ASSERT_TRUE(db);
  auto loaded = load_image(**db, {cut_image, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ((*loaded)[0].health, "partial");
  EXPECT_EQ((*loaded)[0].events, good);
  const int64_t trace = (*loaded)[0].trace_id;
  const uint64_t cut_seq = chunks / 2 * f::kRecordsPerChunk;
  const std::string part = "events_t" + std::to_string(trace) + "_";
  EXPECT_EQ(count(**db, "SELECT count(*) FROM " + part + "0"), cut_seq - f::kRecordsPerChunk);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM " + part + "1"), spec.records.size() - cut_seq);
  EXPECT_EQ(count(**db, "SELECT min(seq) FROM " + part + "1"), cut_seq);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events_default"), 0);
  EXPECT_EQ(count(**db, fmt::format("SELECT count(*) FROM events WHERE seq BETWEEN {} AND {}",
                                    3 * f::kRecordsPerChunk, 4 * f::kRecordsPerChunk - 1)),
            0);
  auto again = load_image(**db, {cut_image, std::nullopt, false});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE((*again)[0].already_loaded);
  EXPECT_EQ((*again)[0].repaired, "");
}

// --salvage on PostgreSQL as on SQLite: a session with one flipped byte in chunk 2 loads every event of its
// other chunks and stores exactly chunk 2's seqs in `losses`; without --salvage it is refused.
TEST_F(PostgresLoad, ASalvagedLoadStoresItsLosses) {
  const uint64_t chunk2_lba = f::kFirstSessionLba + f::sectors_before_chunks(2) + 2 * f::kChunkSectors;
  {
    std::fstream file(image, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(chunk2_lba * f::kSectorSize + sizeof(f::ChunkHeader) + 100));
    const char byte = static_cast<char>(file.get() ^ 0x01);
    file.seekp(static_cast<std::streamoff>(chunk2_lba * f::kSectorSize + sizeof(f::ChunkHeader) + 100));
    file.put(byte);
  }
  auto db = open_database(fresh_database("salvaged"));
  ASSERT_TRUE(db);
  EXPECT_FALSE(load_image(**db, {image, 1, false}));
  auto loaded = load_image(**db, {image, 1, false, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ((*loaded)[0].events, 30'000 - f::kRecordsPerChunk);
  EXPECT_EQ((*loaded)[0].lost, fmt::format("{}-{} ({} events)", 2 * f::kRecordsPerChunk,
                                           3 * f::kRecordsPerChunk - 1, f::kRecordsPerChunk));
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 30'000 - f::kRecordsPerChunk);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM losses"), 1);
  EXPECT_EQ(count(**db, "SELECT first_seq FROM losses"), 2 * f::kRecordsPerChunk);
  EXPECT_EQ(count(**db, "SELECT last_seq FROM losses"), 3 * f::kRecordsPerChunk - 1);
  EXPECT_EQ(count(**db, "SELECT events FROM losses"), f::kRecordsPerChunk);
}

// A load never holds the session whole: loading 3 M events takes at most 40 MB more than loading 100 k (about
// 18 MB: the two parts' decoders and connections; whole, the 2.9 M more events are 70 MB more); a reload's
// already-loaded check too.
TEST_F(PostgresLoad, ALoadsMemoryDoesNotGrowWithTheSession) {
  if (!ett::test::kPeaksAreMeaningful) GTEST_SKIP() << "peak memory under AddressSanitizer";
  const std::string small = dir.file("small.img"), big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(small, {100'000, 26, f::Layout::Double2x4}));
  ASSERT_TRUE(write_synth_capture(big, {3'000'000, 27, f::Layout::Double2x4}));
  const std::string url = fresh_database("memory");
  ASSERT_TRUE(open_database(url));
  auto load_kib = [&](const std::string& image) {
    return ett::test::child_peak_rss_kib([&] {
      auto db = open_database(url);
      return db && load_image(**db, {image, std::nullopt, false});
    });
  };
  for (int round = 0; round < 2; ++round) {  // the second round: both already loaded
    const long small_kib = load_kib(small), big_kib = load_kib(big);
    ASSERT_GT(small_kib, 0);
    ASSERT_GT(big_kib, 0);
    EXPECT_LT(big_kib - small_kib, 40 * 1024)
        << "round " << round << ": " << small_kib << " KiB, then " << big_kib << " KiB";
  }
  auto db = open_database(url);
  ASSERT_TRUE(db);
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 3'100'000);
}

// Events in memory whose feed of one part fails after its first block, as a session whose image changed
// after it was scanned.
class SourceFailingAt final : public EventSource {
 public:
  SourceFailingAt(std::span<const Event> events, uint64_t failing_part)
      : m_span(events), m_failing(failing_part) {}
  uint64_t size() const override { return m_span.size(); }
  std::optional<Cut> middle() const override { return m_span.middle(); }
  EventFeed feed(uint64_t begin, uint64_t end) const override {
    EventFeed inner = m_span.feed(begin, end);
    if (begin != m_failing) return inner;
    auto blocks = std::make_shared<int>(0);
    return [inner, blocks]() -> Expected<std::span<const Event>> {
      if (++*blocks > 1) return make_error(ErrorKind::Io, "the image changed (test)");
      return inner();
    };
  }

 private:
  EventSpan m_span;
  uint64_t m_failing;
};

TEST_F(PostgresLoad, APartThatCannotBeReadLeavesNothingAndSaysWhy) {
  const std::string big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(big, {200'000, 25, f::Layout::Double2x4}));
  auto image_read = TraceImage::open(big);
  ASSERT_TRUE(image_read);
  auto data = image_read->read_session(0);
  ASSERT_TRUE(data);
  const TraceRow row = make_trace_row(image_read->label(), data->summary, data->events);
  const auto cut = EventSpan(data->events).middle();
  ASSERT_TRUE(cut);
  // Either part: the other part's connection stops too, and the cause is what the load says.
  for (const uint64_t failing : {uint64_t{0}, cut->index}) {
    auto db = open_database(fresh_database("failing_part"));
    ASSERT_TRUE(db);
    auto loaded = (*db)->load_trace(row, SourceFailingAt(data->events, failing),
                                    data->summary.header.capture_start_tsc, data->summary.header.tsc_hz, {});
    ASSERT_FALSE(loaded) << failing;
    EXPECT_EQ(loaded.error().message, "the image changed (test)");
    EXPECT_EQ(count(**db, "SELECT count(*) FROM traces"), 0);
    EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 0);
    EXPECT_EQ(count(**db, "SELECT count(*) FROM pg_class WHERE relname ~ '^events_t[0-9]+_[0-9]+$'"), 0);
    auto whole = (*db)->load_trace(row, data->events, data->summary.header.capture_start_tsc,
                                   data->summary.header.tsc_hz, {});
    ASSERT_TRUE(whole) << whole.error().message;
    EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 200'000);
  }
}

// A database of the schema before ett_schema (events without flags and aux; DDL as it was) is migrated when
// opened; a reload of its trace fills in flags and aux; after DROP TABLE events a reload puts them back.
TEST_F(PostgresLoad, AnOldSchemaIsMigratedAndReloadsRepairMissingRows) {
  const std::string url = fresh_database("old_schema");
  {
    auto raw = open_postgres_database(url);  // no ensure_schema: the old tables are made here
    ASSERT_TRUE(raw) << raw.error().message;
    ett::test::write_version1_trace(**raw, image, 1);
    ASSERT_TRUE((*raw)->run_script(
        "INSERT INTO events SELECT 1, s, 1, 0, s * 10, NULL, 0 FROM generate_series(0, 1999) AS s"));
  }
  const std::string db = " --db '" + url + "'";
  auto old = ett("sql 'SELECT count(*) AS n FROM events WHERE aux IS NULL' --csv" + db);
  ASSERT_EQ(old.status, 0) << old.out;
  EXPECT_EQ(old.out, "n\n2000\n");
  auto reload = ett("load " + image + " --session 2" + db);
  ASSERT_EQ(reload.status, 0) << reload.out;
  EXPECT_NE(reload.out.find("was loaded as trace 1, but"), std::string::npos) << reload.out;
  EXPECT_EQ(ett("sql 'SELECT count(*) AS n, count(aux) AS a FROM events' --csv" + db).out,
            "n,a\n2000,2000\n");
  ASSERT_EQ(ett("sql --write 'DROP TABLE events'" + db).status, 0);
  auto repaired = ett("load " + image + " --session 2" + db);
  EXPECT_NE(repaired.out.find("but it has 0 of its 2000 events: its 2000 events were loaded again"),
            std::string::npos)
      << repaired.out;
  auto same = ett("load " + image + " --session 2" + db);
  EXPECT_NE(same.out.find("already loaded as trace 1: nothing changed"), std::string::npos) << same.out;
  EXPECT_EQ(ett("sql 'SELECT version FROM ett_schema' --csv" + db).out,
            "version\n" + std::to_string(kSchemaVersion) + "\n");
}

// A version-3 database keeps events_time (trace_id, time_ns) on events and its partitions: opened, it loses
// the index everywhere (schema version 4), and a trace loaded next gets its primary key alone.
TEST_F(PostgresLoad, AVersion3DatabaseLosesEventsTime) {
  const std::string url = fresh_database("version3");
  {
    auto db = open_database(url);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(load_image(**db, {image, 1, false}));
    ASSERT_TRUE((*db)->run_script(
        "CREATE INDEX events_time ON events (trace_id, time_ns); UPDATE ett_schema SET version = 3"));
    ASSERT_EQ(count(**db,
                    "SELECT count(*) FROM pg_class WHERE relkind IN ('i', 'I') AND relname LIKE "
                    "'events%time%'"),
              3);  // events, events_default and the trace's partition
  }
  auto db = open_database(url);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(count(**db, "SELECT version FROM ett_schema"), kSchemaVersion);
  EXPECT_EQ(
      count(**db,
            "SELECT count(*) FROM pg_class WHERE relkind IN ('i', 'I') AND relname LIKE 'events%time%'"),
      0);
  auto loaded = load_image(**db, {image, 2, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(count(**db, "SELECT count(*) FROM events"), 32'000);
  EXPECT_EQ(count(**db,
                  "SELECT count(*) FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid WHERE "
                  "c.relname LIKE 'events\\_t%'"),
            2);  // the two traces' primary keys
}

// An events table from before partitioning (a plain table with traces in it) becomes the partition
// events_legacy when opened: its traces read and reload as before, new traces get partitions of their own.
TEST_F(PostgresLoad, APlainEventsTableBecomesTheLegacyPartition) {
  const std::string url = fresh_database("plain_events");
  {
    auto raw = open_postgres_database(url);
    ASSERT_TRUE(raw) << raw.error().message;
    for (const std::string& statement : schema_statements(DbEngine::Postgres)) {
      std::string plain = statement;
      if (const size_t at = plain.find(" PARTITION BY RANGE (trace_id, seq)"); at != std::string::npos)
        plain.erase(at);
      if (plain.find("PARTITION OF") != std::string::npos) continue;
      ASSERT_TRUE((*raw)->run_script(plain)) << plain;
    }
    ASSERT_TRUE(
        (*raw)->run_script("INSERT INTO ett_schema VALUES (2); INSERT INTO traces (disk_uuid, session, "
                           "content_hash) VALUES ('u', "
                           "9, 'h'); INSERT INTO events SELECT 1, s, 1, 0, s * 10, s, 0, 0, 0 FROM "
                           "generate_series(0, 999) AS s"));
  }
  auto pg = open_database(url);
  ASSERT_TRUE(pg) << pg.error().message;
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM pg_class WHERE relname = 'events' AND relkind = 'p'"), 1);
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM pg_class WHERE relname = 'events_legacy' AND relispartition"),
            1);
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM events WHERE trace_id = 1"), 1'000);
  auto loaded = load_image(**pg, {image, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ((*loaded)[0].trace_id, 2);
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM events_t2_0"), 30'000);
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM events_t3_0"), 2'000);
  uint64_t rows = 0;
  ASSERT_TRUE((*pg)->read_events(1, [&](std::span<const EventRow> batch) -> Status {
    rows += batch.size();
    return {};
  }));
  EXPECT_EQ(rows, 1'000u);
  EXPECT_EQ(count(**pg, "SELECT count(*) FROM events"), 33'000);
}

}  // namespace
