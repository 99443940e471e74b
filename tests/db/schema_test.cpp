// schema_test.cpp: the trace database's schema on real SQLite files: every record field kept (hwlat and
// calibrate captures), the migration of an old-schema database, the indexes the named queries use, and the
// already-loaded check that repairs missing or changed rows, through the real `ett` binary where users meet
// it.
#include "db/schema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "db/loader.h"
#include "db/queries.h"
#include "db/sqlite.h"
#include "image/session_writer.h"
#include "image/synth.h"
#include "image/trace_image.h"
#include "support/db_fixtures.h"
#include "support/test_disk_writer.h"

namespace {

using namespace ett::host;
namespace f = ett::format;

using ett::test::CommandResult;
using ett::test::ett;

std::unique_ptr<Database> open_db(const std::string& url) {
  auto db = open_database(url);
  if (!db) throw std::runtime_error(db.error().message);
  return std::move(*db);
}

ResultTable rows(Database& db, const std::string& sql, std::vector<SqlValue> params = {}) {
  auto table = db.query(sql, params);
  if (!table) throw std::runtime_error(table.error().message);
  return std::move(*table);
}

int64_t number(Database& db, const std::string& sql) {
  return std::stoll(rows(db, sql).rows.at(0).at(0).value());
}

// Records as the kernel writes them in mode=hwlat (a gap per record) and mode=calibrate (a loop step per
// record): probe 0, the length in aux; some flags set, so that a lost column shows.
std::vector<f::EventRecord> mode_records(f::CaptureMode mode, size_t count) {
  std::vector<f::EventRecord> records(count);
  uint64_t tsc = 1'000'000;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t length = mode == f::CaptureMode::HwLat ? 40'000 + static_cast<uint32_t>(i * 7919 % 90'000)
                                                          : 90 + static_cast<uint32_t>(i % 13);
    tsc += length + 5;
    records[i].tsc = tsc;
    records[i].probe = 0;
    records[i].code = records[i].lines = mode == f::CaptureMode::HwLat ? 0 : static_cast<uint8_t>(i % 3);
    records[i].flags = static_cast<uint8_t>(i % 5 == 0 ? 1 : 0);
    records[i].aux = i == 3 ? 0xFFFFFFFFu : length;  // saturated
  }
  return records;
}

// Session 1: a synthetic capture; 2: hwlat; 3: calibrate.
void write_mode_sessions(const std::string& image, std::vector<f::EventRecord>& hwlat,
                         std::vector<f::EventRecord>& calibrate) {
  ASSERT_TRUE(write_synth_capture(image, {2'000, 5, f::Layout::Double2x4}));
  auto writer = SessionWriter::open(image);
  ASSERT_TRUE(writer) << writer.error().message;
  hwlat = mode_records(f::CaptureMode::HwLat, 3'000);
  calibrate = mode_records(f::CaptureMode::Calibrate, 5'000);
  SessionSpec spec;
  spec.mode = f::CaptureMode::HwLat;
  spec.records = hwlat;
  ASSERT_TRUE(writer->append(spec));
  spec.mode = f::CaptureMode::Calibrate;
  spec.records = calibrate;
  ASSERT_TRUE(writer->append(spec));
}

void expect_fields_kept(Database& db, int64_t trace, const std::vector<f::EventRecord>& records) {
  const ResultTable table =
      rows(db, "SELECT seq, tsc, flags, aux FROM events WHERE trace_id = $1 ORDER BY seq", {trace});
  ASSERT_EQ(table.rows.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_EQ(*table.rows[i][1], std::to_string(records[i].tsc)) << "row " << i;
    ASSERT_EQ(*table.rows[i][2], std::to_string(records[i].flags)) << "row " << i;
    ASSERT_EQ(*table.rows[i][3], std::to_string(records[i].aux)) << "row " << i;
  }
}

class SchemaTest : public ::testing::Test {
 protected:
  ett::test::TempDir dir;
  std::string image = dir.file("trace.img");
  std::string path = dir.file("traces.db");
  std::string url = "sqlite:" + path;
};

TEST_F(SchemaTest, HwlatAndCalibrateCapturesKeepAuxAndFlags) {
  std::vector<f::EventRecord> hwlat, calibrate;
  write_mode_sessions(image, hwlat, calibrate);
  auto db = open_db(url);
  auto loaded = load_image(*db, {image, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 3u);
  EXPECT_EQ(rows(*db, "SELECT mode FROM traces WHERE trace_id = $1", {(*loaded)[1].trace_id}).rows[0][0],
            "hwlat");
  expect_fields_kept(*db, (*loaded)[1].trace_id, hwlat);
  expect_fields_kept(*db, (*loaded)[2].trace_id, calibrate);
  EXPECT_EQ(number(*db, "SELECT version FROM ett_schema"), kSchemaVersion);
}

// Writes a version-1 database holding session 2 (hwlat) of `image` as trace 1, as the ett of then did.
void write_version1_database(const std::string& path, const std::string& image) {
  auto db = open_sqlite_database(path);  // no ensure_schema: the tables are made here
  ASSERT_TRUE(db) << db.error().message;
  const std::vector<Event> events = ett::test::write_version1_trace(**db, image, 1);
  ASSERT_TRUE((*db)->run_script("BEGIN"));
  for (const Event& event : events) {
    const SqlValue values[] = {static_cast<int64_t>(event.seq), int64_t{event.probe}, int64_t{event.code},
                               static_cast<int64_t>(event.tsc), int64_t{event.lines}};
    ASSERT_TRUE((*db)->query("INSERT INTO events VALUES (1, $1, $2, $3, $4, NULL, $5)", values));
  }
  ASSERT_TRUE((*db)->run_script("INSERT INTO probes VALUES (1, 1, 'gap'); COMMIT"));
}

TEST_F(SchemaTest, AnOldSchemaDatabaseIsMigratedAndAReloadFillsInAuxAndFlags) {
  std::vector<f::EventRecord> hwlat, calibrate;
  write_mode_sessions(image, hwlat, calibrate);
  write_version1_database(path, image);

  // Any command migrates: the columns come, NULL in the old rows, the version is recorded.
  const CommandResult migrated = ett("sql --db " + url +
                                     " \"SELECT count(*) AS old FROM events WHERE aux IS "
                                     "NULL AND flags IS NULL\" --csv");
  ASSERT_EQ(migrated.status, 0) << migrated.out;
  EXPECT_EQ(migrated.out, "old\n3000\n");
  {
    auto db = open_db(url);
    EXPECT_EQ(number(*db, "SELECT version FROM ett_schema"), kSchemaVersion);
    EXPECT_EQ(number(*db, "SELECT count(*) FROM sqlite_schema WHERE name = 'events_time'"), 0);
    // The old trace's blocks of seqs, from its rows (3000 events: seqs 0..2999, one block).
    EXPECT_EQ(rows(*db, "SELECT first_seq, last_seq FROM event_blocks WHERE trace_id = 1").rows,
              (std::vector<std::vector<DbValue>>{{"0", "2999"}}));
    // The old trace's counts per probe and code, from its rows: `codes` answers before any reload.
    EXPECT_EQ(number(*db, "SELECT sum(events) FROM event_codes WHERE trace_id = 1"), 3000);
    EXPECT_EQ(number(*db, "SELECT count(*) FROM event_codes WHERE trace_id = 1"),
              number(*db, "SELECT count(*) FROM (SELECT DISTINCT probe, code FROM events)"));
  }
  // Loading the same session again finds it, sees what is missing and loads its events again; the label
  // stays.
  const CommandResult reload = ett("load " + image + " --session 2 --db " + url);
  ASSERT_EQ(reload.status, 0) << reload.out;
  EXPECT_NE(reload.out.find("was loaded as trace 1, but 3000 of its events have no flags and aux"),
            std::string::npos)
      << reload.out;
  auto db = open_db(url);
  expect_fields_kept(*db, 1, hwlat);
  EXPECT_EQ(rows(*db, "SELECT label FROM probes WHERE trace_id = 1 AND probe = 1").rows[0][0], "gap");
  const CommandResult again = ett("load " + image + " --session 2 --db " + url);
  EXPECT_NE(again.out.find("already loaded as trace 1: nothing changed"), std::string::npos) << again.out;
}

// What `window` returns, and the same rows found by scanning every event of the trace.
void expect_window_as_a_scan(Database& db, int64_t trace, int64_t from_ns, int64_t to_ns, size_t at_least) {
  const SqlValue params[] = {trace, from_ns, to_ns};
  auto window = db.query(find_named_query("window")->sql, params);
  ASSERT_TRUE(window) << window.error().message;
  auto scanned = db.query(
      "SELECT e.seq, e.probe, p.label, e.code, e.tsc, e.time_ns FROM events e NOT INDEXED "
      "LEFT JOIN probes p ON p.trace_id = e.trace_id AND p.probe = e.probe "
      "WHERE e.trace_id = $1 AND e.time_ns BETWEEN $2 AND $3 ORDER BY e.seq",
      params);
  ASSERT_TRUE(scanned) << scanned.error().message;
  EXPECT_GE(scanned->rows.size(), at_least);
  EXPECT_EQ(window->columns, scanned->columns);
  EXPECT_EQ(window->rows, scanned->rows) << from_ns << ".." << to_ns;
}

// A database of schema version 2 (the events_time index, no event_blocks) is migrated when opened: the index
// goes, the blocks are computed from the rows, `window` answers as before, and the trace counts as loaded.
TEST_F(SchemaTest, AVersion2DatabaseGetsEventBlocks) {
  ASSERT_TRUE(write_synth_capture(image, {20'000, 5, f::Layout::Double2x4}));
  ASSERT_EQ(ett("load " + image + " --db " + url).status, 0);
  std::vector<std::vector<DbValue>> blocks;
  {
    auto db = open_db(url);
    blocks = rows(*db, "SELECT * FROM event_blocks ORDER BY trace_id, first_seq").rows;
    ASSERT_EQ(blocks.size(), 5u);  // seqs 0..19999 by 4096
    ASSERT_TRUE(
        db->run_script("DROP TABLE event_blocks; CREATE INDEX events_time ON events (trace_id, time_ns); "
                       "UPDATE ett_schema SET version = 2"));
  }
  auto db = open_db(url);
  EXPECT_EQ(number(*db, "SELECT version FROM ett_schema"), kSchemaVersion);
  EXPECT_EQ(number(*db, "SELECT count(*) FROM sqlite_schema WHERE name = 'events_time'"), 0);
  EXPECT_EQ(rows(*db, "SELECT * FROM event_blocks ORDER BY trace_id, first_seq").rows, blocks);
  const int64_t last_ns = number(*db, "SELECT max(time_ns) FROM events");
  expect_window_as_a_scan(*db, 1, last_ns / 3, last_ns / 2, 1000);
  const CommandResult again = ett("load " + image + " --db " + url);
  EXPECT_NE(again.out.find("already loaded as trace 1: nothing changed"), std::string::npos) << again.out;
}

// A database of schema version 5 (no event_packs on SQLite) is migrated when opened: the table comes, empty,
// and its traces are read from their events rows as before; loading the image again names what is missing,
// writes the trace's packs, and the reads take them.
TEST_F(SchemaTest, AVersion5DatabaseGetsEventPacks) {
  ASSERT_TRUE(write_synth_capture(image, {20'000, 5, f::Layout::Double2x4}));
  ASSERT_EQ(ett("load " + image + " --db " + url).status, 0);
  const std::string durations = "analyze durations --from 1 --to 2 --format csv --db " + url;
  const CommandResult packed = ett(durations);
  ASSERT_EQ(packed.status, 0) << packed.out;
  {
    auto db = open_db(url);
    EXPECT_EQ(number(*db, "SELECT sum(events) FROM event_packs"), 20'000);
    ASSERT_TRUE(db->run_script("DROP TABLE event_packs; UPDATE ett_schema SET version = 5"));
  }
  {
    auto db = open_db(url);
    EXPECT_EQ(number(*db, "SELECT version FROM ett_schema"), kSchemaVersion);
    EXPECT_EQ(number(*db, "SELECT count(*) FROM event_packs"), 0);
  }
  const CommandResult from_rows = ett(durations);
  ASSERT_EQ(from_rows.status, 0) << from_rows.out;
  EXPECT_EQ(from_rows.out, packed.out);
  const CommandResult again = ett("load " + image + " --db " + url);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("but its event_packs hold 0 of its 20000 events"), std::string::npos) << again.out;
  auto db = open_db(url);
  EXPECT_EQ(number(*db, "SELECT sum(events) FROM event_packs"), 20'000);
  EXPECT_EQ(number(*db, "SELECT count(*) FROM events"), 20'000);
  EXPECT_EQ(ett(durations).out, packed.out);
}

TEST_F(SchemaTest, ADatabaseOfANewerSchemaIsRefusedUntouched) {
  ASSERT_TRUE(write_synth_capture(image, {1'000, 5, f::Layout::Double2x4}));
  ASSERT_EQ(ett("load " + image + " --db " + url).status, 0);
  ASSERT_EQ(ett("sql --write --db " + url + " \"UPDATE ett_schema SET version = 99\"").status, 0);
  const auto before = std::filesystem::file_size(path);
  for (const std::string& command : {"load " + image + " --db " + url, "sql --db " + url + " \"SELECT 1\""}) {
    const CommandResult refused = ett(command);
    EXPECT_NE(refused.status, 0) << command;
    EXPECT_NE(refused.out.find("schema version 99, newer than this ett knows (" +
                               std::to_string(kSchemaVersion) + ")"),
              std::string::npos)
        << refused.out;
  }
  EXPECT_EQ(std::filesystem::file_size(path), before);
}

// The query plan of each named query at 10 k events: through the primary key or an index, never a scan of all
// events, and `codes` from its index alone.
TEST_F(SchemaTest, NamedQueriesUseTheirIndexes) {
  ASSERT_TRUE(write_synth_capture(image, {10'000, 5, f::Layout::Double2x4}));
  ASSERT_TRUE(write_synth_capture(image, {10'000, 6, f::Layout::Double2x4}));
  auto db = open_db(url);
  ASSERT_TRUE(load_image(*db, {image, std::nullopt, true}));
  auto plan = [&](const char* name, std::vector<SqlValue> params) {
    std::string text;
    for (const auto& row :
         rows(*db, std::string("EXPLAIN QUERY PLAN ") + find_named_query(name)->sql, params).rows)
      text += *row.back() + "\n";
    return text;
  };
  // `window`: the trace's blocks of seqs, then each matching block's range of the primary key, in seq order
  // without a sort.
  const std::string window = plan("window", {int64_t{2}, int64_t{1'000'000}, int64_t{2'000'000}});
  EXPECT_NE(window.find("SEARCH b USING PRIMARY KEY (trace_id=?)"), std::string::npos) << window;
  EXPECT_NE(window.find("SEARCH e USING PRIMARY KEY (trace_id=? AND seq>? AND seq<?)"), std::string::npos)
      << window;
  EXPECT_EQ(window.find("TEMP B-TREE"), std::string::npos) << window;
  const std::string codes = plan("codes", {int64_t{2}});
  EXPECT_NE(codes.find("SEARCH c USING PRIMARY KEY (trace_id=?)"), std::string::npos) << codes;
  EXPECT_EQ(codes.find("events"), std::string::npos) << codes;  // counted by the load
  // `probe` returns a large share of the trace with columns that only the table has: the trace's range of
  // the primary key, in seq order, beats an index search plus a lookup per row and a sort.
  const std::string probe = plan("probe", {int64_t{2}, int64_t{1}});
  EXPECT_NE(probe.find("SEARCH events USING PRIMARY KEY (trace_id=?)"), std::string::npos) << probe;
  const std::string event = plan("event", {int64_t{2}, int64_t{5}});
  EXPECT_NE(event.find("SEARCH e USING PRIMARY KEY (trace_id=? AND seq=?)"), std::string::npos) << event;
  for (const std::string& text : {window, codes, probe, event})
    EXPECT_EQ(text.find("SCAN e"), std::string::npos) << text;
  // And it finds what a scan finds: windows inside one block, across blocks, before and after the trace.
  const int64_t last_ns = number(*db, "SELECT max(time_ns) FROM events WHERE trace_id = 2");
  expect_window_as_a_scan(*db, 2, last_ns / 10, last_ns / 10 + last_ns / 100, 10);
  expect_window_as_a_scan(*db, 2, last_ns / 4, 3 * last_ns / 4, 4'096);
  expect_window_as_a_scan(*db, 2, -1'000'000'000'000, last_ns * 2, 10'000);
  expect_window_as_a_scan(*db, 2, last_ns + 1, last_ns * 2, 0);
}

// After rows went missing or changed behind ett's back, loading the session again says what was wrong and
// puts them back; only a trace whose rows are all there, as loaded, is "nothing changed".
TEST_F(SchemaTest, AReloadChecksTheRowsAndRepairsThem) {
  ASSERT_TRUE(write_synth_capture(image, {20'000, 5, f::Layout::Double2x4}));
  const std::string load = "load " + image + " --db " + url;
  ASSERT_EQ(ett(load).status, 0);
  auto expect_repaired = [&](const std::string& damage, const std::string& says) {
    // Behind ett's back (another program's writes): `ett sql --write` would make the derived tables again.
    auto damaged = open_db(url)->run_script(damage);
    ASSERT_TRUE(damaged) << damaged.error().message;
    const CommandResult reload = ett(load);
    EXPECT_EQ(reload.status, 0) << reload.out;
    EXPECT_NE(reload.out.find("was loaded as trace 1, but " + says), std::string::npos)
        << damage << ": " << reload.out;
    EXPECT_NE(reload.out.find("its 20000 events were loaded again"), std::string::npos) << reload.out;
    const CommandResult counted = ett("sql --db " + url + " \"SELECT count(*) AS n FROM events\" --csv");
    EXPECT_EQ(counted.out, "n\n20000\n") << damage;
    const CommandResult same = ett(load);
    EXPECT_NE(same.out.find("already loaded as trace 1: nothing changed"), std::string::npos) << same.out;
  };
  expect_repaired("DROP TABLE events", "it has 0 of its 20000 events");
  expect_repaired("DELETE FROM events WHERE seq % 3 = 0", "it has 13333 of its 20000 events");
  expect_repaired("UPDATE events SET code = code + 1 WHERE seq = 777", "its events differ from the disk's");
  expect_repaired("UPDATE events SET aux = 5 WHERE seq = 10", "its events differ from the disk's");
  expect_repaired("DELETE FROM event_codes WHERE probe = 1", "its event_codes count");
  expect_repaired("DELETE FROM event_blocks WHERE first_seq > 0", "its event_blocks has 1 of its 5 blocks");
  // No index on events to keep up during a load: `window` searches event_blocks.
  const CommandResult indexes =
      ett("sql --db " + url +
          " \"SELECT count(*) AS n FROM sqlite_schema WHERE tbl_name = 'events' AND "
          "type = 'index' AND sql IS NOT NULL\" --csv");
  EXPECT_EQ(indexes.out, "n\n0\n");
}

TEST_F(SchemaTest, AFailedLoadLeavesNoNewDatabaseFile) {
  {
    std::ofstream junk(image, std::ios::binary);
    junk << std::string(1 << 20, '\0');
  }
  const std::string missing = dir.file("missing.img");
  for (const std::string& source : {missing, image}) {
    const CommandResult failed = ett("load " + source + " --db " + url);
    EXPECT_NE(failed.status, 0) << failed.out;
    EXPECT_FALSE(std::filesystem::exists(path)) << source << ": " << failed.out;
    EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
  }
  // An existing database stays, with what it holds, when a later load fails.
  const std::string good = dir.file("good.img");
  ASSERT_TRUE(write_synth_capture(good, {1'000, 5, f::Layout::Double2x4}));
  ASSERT_EQ(ett("load " + good + " --db " + url).status, 0);
  EXPECT_NE(ett("load " + missing + " --db " + url).status, 0);
  const CommandResult kept = ett("sql --db " + url + " \"SELECT count(*) AS n FROM events\" --csv");
  EXPECT_EQ(kept.out, "n\n1000\n");
}

}  // namespace
