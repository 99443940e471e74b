// sqlite_test.cpp: the trace database on real SQLite files: synth -> load -> queries, idempotence,
// atomicity (abandoned and killed loads), output formats.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <span>
#include <vector>

#include "analysis/input.h"
#include "analysis/output.h"
#include "common/probe_layout.h"
#include "common/tsc_time.h"
#include "db/event_packs.h"
#include "db/loader.h"
#include "db/queries.h"
#include "db/schema.h"
#include "db/table_output.h"
#include "image/event_writer.h"
#include "image/session_stream.h"
#include "image/synth.h"
#include "image/trace_image.h"
#include "support/db_fixtures.h"
#include "support/test_disk_writer.h"

namespace {

using namespace ett::host;
namespace f = ett::format;

std::unique_ptr<Database> open_db(const std::string& url) {
  auto db = open_database(url);
  if (!db) throw std::runtime_error(db.error().message);
  return std::move(*db);
}

int64_t count(Database& db, const std::string& sql) {
  auto table = db.query(sql, {});
  if (!table) throw std::runtime_error(table.error().message);
  return std::stoll(table->rows.at(0).at(0).value());
}

TEST(SynthCapture, SameSeedSameEventsAndEveryChangeIsVisible) {
  const auto a = synth_capture({5000, 7, f::Layout::Double2x4});
  const auto b = synth_capture({5000, 7, f::Layout::Double2x4});
  const auto c = synth_capture({5000, 8, f::Layout::Double2x4});
  ASSERT_EQ(a.records.size(), 5000u);
  EXPECT_EQ(0, std::memcmp(a.records.data(), b.records.data(), 5000 * sizeof(f::EventRecord)));
  EXPECT_NE(0, std::memcmp(a.records.data(), c.records.data(), 5000 * sizeof(f::EventRecord)));
  for (f::Layout layout :
       {f::Layout::Double2x4, f::Layout::Single8x1, f::Layout::Quad4x2, f::Layout::Byte1x8}) {
    const ProbeLayout probes(layout);
    const auto capture = synth_capture({3000, 1, layout});
    uint8_t lines = capture.initial_lines;
    uint64_t tsc = capture.capture_start_tsc;
    for (const auto& record : capture.records) {
      ASSERT_GE(record.tsc, tsc);
      ASSERT_GE(record.probe, 1);
      ASSERT_LE(record.probe, probes.probe_count());
      ASSERT_NE(record.code, probes.code_of(lines, record.probe)) << "a change must change the code";
      lines = probes.with_code(lines, record.probe, record.code);
      ASSERT_EQ(record.lines, lines);
      tsc = record.tsc;
    }
  }
}

TEST(SynthCapture, WritesARealTraceDiskThatDecodesToTheSameEvents) {
  ett::test::TempDir dir;
  const std::string image = dir.file("synth.img");
  auto written = write_synth_capture(image, {10'000, 3, f::Layout::Double2x4});
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(written->created_disk);
  auto second = write_synth_capture(image, {500, 4, f::Layout::Quad4x2});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->session, 2u);
  auto opened = TraceImage::open(image);
  ASSERT_TRUE(opened);
  ASSERT_EQ(opened->sessions().size(), 2u);
  auto data = opened->read_session(0);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->summary.health, SessionHealth::Ok);
  const auto expected = synth_capture({10'000, 3, f::Layout::Double2x4});
  ASSERT_EQ(data->events.size(), expected.records.size());
  for (size_t i = 0; i < expected.records.size(); i += 997) {
    EXPECT_EQ(data->events[i].tsc, expected.records[i].tsc);
    EXPECT_EQ(data->events[i].code, expected.records[i].code);
  }
  EXPECT_EQ(data->summary.header.tsc_hz, expected.tsc_hz);
}

class SqliteLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(write_synth_capture(image, {20'000, 11, f::Layout::Double2x4}));
    ASSERT_TRUE(write_synth_capture(image, {3'000, 12, f::Layout::Single8x1}));
  }
  ett::test::TempDir dir;
  std::string image = dir.file("trace.img");
  std::string url = "sqlite:" + dir.file("traces.db");
};

TEST_F(SqliteLoad, LoadsEveryEventWithItsTimeAndEveryHeaderField) {
  auto db = open_db(url);
  auto loaded = load_image(*db, {image, 1, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_FALSE((*loaded)[0].already_loaded);
  const int64_t trace = (*loaded)[0].trace_id;

  auto opened = TraceImage::open(image);
  const SessionData data = *opened->read_session(0);
  auto rows =
      db->query("SELECT seq, probe, code, tsc, time_ns, lines FROM events WHERE trace_id = $1 ORDER BY seq",
                std::vector<SqlValue>{trace});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->rows.size(), data.events.size());
  const EventTiming timing{data.summary.header.capture_start_tsc, data.summary.header.tsc_hz};
  for (size_t i = 0; i < data.events.size(); ++i) {
    const auto& row = rows->rows[i];
    const Event& event = data.events[i];
    ASSERT_EQ(*row[0], std::to_string(event.seq));
    ASSERT_EQ(*row[1], std::to_string(event.probe));
    ASSERT_EQ(*row[2], std::to_string(event.code));
    ASSERT_EQ(*row[3], std::to_string(event.tsc));
    ASSERT_EQ(*row[4], std::to_string(tsc_to_ns(event.tsc, timing)));
    ASSERT_EQ(*row[5], std::to_string(event.lines));
  }
  auto trace_row = db->query(
      "SELECT disk_uuid, session, tsc_hz, layout, probe_source, stop_reason, event_count, capture_start_tsc, "
      "cmdline, health FROM traces WHERE trace_id = $1",
      std::vector<SqlValue>{trace});
  ASSERT_TRUE(trace_row);
  const auto& t = trace_row->rows.at(0);
  EXPECT_EQ(*t[0], format_uuid(opened->label().disk_uuid));
  EXPECT_EQ(*t[1], "1");
  EXPECT_EQ(*t[2], std::to_string(data.summary.header.tsc_hz));
  EXPECT_EQ(*t[3], "2x4");
  EXPECT_EQ(*t[4], "ivshmem");
  EXPECT_EQ(*t[5], "host-request");
  EXPECT_EQ(*t[6], "20000");
  EXPECT_EQ(*t[7], std::to_string(data.summary.header.capture_start_tsc));
  EXPECT_EQ(*t[8], "layout=2x4 (ett synth)");
  EXPECT_EQ(*t[9], "ok");
  EXPECT_EQ(count(*db, "SELECT count(*) FROM probes WHERE trace_id = " + std::to_string(trace)), 2);
}

// The session's stall table goes into `stalls` with the events, in ns from the capture start as
// events.time_ns; the header's check intervals go into traces (ns columns NULL for a session that did not
// record them).
TEST(SqliteStalls, TheStallTableIsLoadedWithTheEvents) {
  ett::test::TempDir dir;
  const std::string image = dir.file("stalls.img");
  ett::test::make_blank_disk(image);
  const auto records = ett::test::make_records(50);
  {
    ett::test::TestDiskWriter writer(image);
    ett::test::SessionSpec old_spec;
    old_spec.records = records;
    old_spec.format_version = 1;
    writer.append(old_spec);
    ett::test::SessionSpec spec;
    spec.records = records;  // tsc_hz 3 GHz, capture_start_tsc 1,000,000
    spec.stalls = {{1'003'000, 120'000'000}, {1'030'000, 90'000}};
    spec.typical_check_ticks = 30'000;
    spec.longest_check_ticks = 120'000'000;
    spec.stall_threshold_ticks = 120'000;
    writer.append(spec);
  }
  auto db = open_db("sqlite:" + dir.file("t.db"));
  auto loaded = load_image(*db, {image, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2u);
  auto rows = db->query(
      "SELECT trace_id, start_ns, length_ns, start_tsc, length_ticks FROM stalls ORDER BY start_tsc", {});
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->rows.size(), 2u);
  EXPECT_EQ(*rows->rows[0][0], std::to_string((*loaded)[1].trace_id));
  EXPECT_EQ(*rows->rows[0][1], "1000");      // 3,000 ticks at 3 GHz
  EXPECT_EQ(*rows->rows[0][2], "40000000");  // 120,000,000 ticks: 40 ms
  EXPECT_EQ(*rows->rows[1][1], "10000");
  EXPECT_EQ(*rows->rows[1][2], "30000");
  auto traces = db->query(
      "SELECT format_version, stall_count, longest_stall_ns, longest_check_ns, typical_check_ticks FROM "
      "traces "
      "ORDER BY trace_id",
      {});
  ASSERT_TRUE(traces);
  EXPECT_EQ(*traces->rows[0][0], "1");
  EXPECT_EQ(*traces->rows[0][1], "0");
  EXPECT_FALSE(traces->rows[0][2]) << "not recorded: NULL";
  EXPECT_EQ(*traces->rows[1][0], "2");
  EXPECT_EQ(*traces->rows[1][1], "2");
  EXPECT_EQ(*traces->rows[1][2], "40000000");
  EXPECT_EQ(*traces->rows[1][3], "40000000");
  EXPECT_EQ(*traces->rows[1][4], "30000");
}

// A database made before traces had the check-interval columns gets them on open and keeps loading.
TEST(SqliteStalls, AnOlderDatabaseGetsTheNewColumns) {
  ett::test::TempDir dir;
  const std::string url = "sqlite:" + dir.file("old.db");
  {
    auto db = open_db(url);
    ASSERT_TRUE(
        db->run_script("ALTER TABLE traces DROP COLUMN longest_check_ns; "
                       "ALTER TABLE traces DROP COLUMN stall_count"));
  }
  auto db = open_db(url);
  EXPECT_EQ(count(*db,
                  "SELECT count(*) FROM pragma_table_info('traces') WHERE name IN ('longest_check_ns', "
                  "'stall_count')"),
            2);
}

TEST_F(SqliteLoad, LoadingAgainChangesNothingAndAllLoadsEachSessionOnce) {
  auto db = open_db(url);
  auto first = load_image(*db, {image, std::nullopt, true});
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 23'000);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM probes"), 2 + 8);
  auto latest = latest_trace(*db);
  ASSERT_TRUE(latest);
  EXPECT_EQ(*latest, (*first)[1].trace_id);

  auto again = load_image(*open_db(url), {image, std::nullopt, true});
  ASSERT_TRUE(again);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE((*again)[i].already_loaded);
    EXPECT_EQ((*again)[i].trace_id, (*first)[i].trace_id);
  }
  EXPECT_EQ(count(*db, "SELECT count(*) FROM traces"), 2);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 23'000);
}

TEST_F(SqliteLoad, AnAbandonedLoadLeavesNothing) {
  auto db = open_db(url);
  bool asked = false;
  auto abandoned = load_image(*db, {image, 1, false}, [&](uint32_t, uint64_t done, uint64_t total) {
    asked = true;
    return done < total / 2;
  });
  ASSERT_FALSE(abandoned);
  EXPECT_TRUE(asked);
  EXPECT_EQ(abandoned.error().kind, ErrorKind::Interrupted);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 0);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM probes"), 0);
  auto loaded = load_image(*db, {image, 1, false});
  ASSERT_TRUE(loaded);
  EXPECT_FALSE((*loaded)[0].already_loaded);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 20'000);
}

// A load killed inside its transaction leaves the file as it was. This one is bigger than the load's page
// cache, so it has written pages into the database file before it dies (the cache spills): the rollback
// journal takes the file back when it is next opened.
TEST_F(SqliteLoad, AKilledLoadLeavesNothing) {
  const std::string big = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(big, {1'000'000, 13, f::Layout::Double2x4}));
  ASSERT_TRUE(load_image(*open_db(url), {image, 2, false}));  // an earlier trace must survive
  const std::string path = dir.file("traces.db");
  const uintmax_t before = std::filesystem::file_size(path);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = open_database(url);
    (void)load_image(**db, {big, std::nullopt, false}, [&](uint32_t, uint64_t done, uint64_t total) {
      if (done >= total * 3 / 4) {
        std::error_code error;
        ::_exit(std::filesystem::file_size(path, error) > before + (uintmax_t{8} << 20) ? 42 : 43);
      }
      return true;
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  // 42: it died after the file grew; 43: the file had not grown; 0: the load ended.
  ASSERT_EQ(WEXITSTATUS(status), 42) << "the load must die after it wrote pages into the file";
  auto db = open_db(url);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM traces"), 1);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 3'000);
  auto check = db->query("PRAGMA integrity_check", {});
  ASSERT_TRUE(check) << check.error().message;
  ASSERT_EQ(check->rows.size(), 1u);
  EXPECT_EQ(*check->rows[0][0], "ok");
  EXPECT_EQ(std::filesystem::file_size(path), before);
  auto loaded = load_image(*db, {big, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE((*loaded)[0].already_loaded);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 1'003'000);
}

TEST_F(SqliteLoad, NamedQueriesAnswerFromTheLoadedEvents) {
  auto db = open_db(url);
  auto loaded = load_image(*db, {image, 1, false});
  ASSERT_TRUE(loaded);
  const int64_t trace = (*loaded)[0].trace_id;
  const SessionData data = *TraceImage::open(image)->read_session(0);
  const EventTiming timing{data.summary.header.capture_start_tsc, data.summary.header.tsc_hz};

  const std::vector<std::string> seq = {"12345"};
  auto event = run_named_query(*db, *find_named_query("event"), trace, seq);
  ASSERT_TRUE(event) << event.error().message;
  ASSERT_EQ(event->rows.size(), 1u);
  EXPECT_EQ(*event->rows[0][6], std::to_string(data.events[12345].tsc));

  const int64_t from = tsc_to_ns(data.events[1000].tsc, timing),
                to = tsc_to_ns(data.events[1100].tsc, timing);
  const std::vector<std::string> window = {std::to_string(from), std::to_string(to)};
  auto in_window = run_named_query(*db, *find_named_query("window"), trace, window);
  ASSERT_TRUE(in_window) << in_window.error().message;
  size_t expected = 0;
  for (const Event& e : data.events) {
    const int64_t ns = tsc_to_ns(e.tsc, timing);
    expected += ns >= from && ns <= to;
  }
  EXPECT_EQ(in_window->rows.size(), expected);
  EXPECT_GE(expected, 101u);

  const std::vector<std::string> probe = {"2"};
  auto of_probe = run_named_query(*db, *find_named_query("probe"), trace, probe);
  ASSERT_TRUE(of_probe);
  size_t on_two = 0;
  for (const Event& e : data.events) on_two += e.probe == 2;
  EXPECT_EQ(of_probe->rows.size(), on_two);
  for (const auto& row : of_probe->rows) ASSERT_EQ(*row[1], "2");

  auto codes = run_named_query(*db, *find_named_query("codes"), trace, {});
  ASSERT_TRUE(codes);
  int64_t total = 0;
  for (const auto& row : codes->rows) total += std::stoll(*row[3]);
  EXPECT_EQ(total, 20'000);

  const std::vector<std::string> bad = {"twelve"};
  auto wrong = run_named_query(*db, *find_named_query("event"), trace, bad);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("SEQ"), std::string::npos);
  EXPECT_FALSE(run_named_query(*db, *find_named_query("window"), trace, seq));
}

// More events than one INSERT ... SELECT chunk (64 Ki events): the chunks join without gap or overlap,
// progress comes between chunks, abandoning there keeps nothing; a session without a TSC rate loads NULL
// times.
TEST(SqliteBulkLoad, ChunksJoinWithoutGapsAndNoRateGivesNullTimes) {
  ett::test::TempDir dir;
  const std::string image = dir.file("big.img");
  ASSERT_TRUE(write_synth_capture(image, {150'000, 5, f::Layout::Double2x4}));
  {
    ett::test::TestDiskWriter writer(image);
    ett::test::SessionSpec spec;
    spec.records = ett::test::make_records(1'000);
    spec.tsc_hz = 0;
    writer.append(spec);
  }
  const std::string url = "sqlite:" + dir.file("traces.db");

  std::vector<uint64_t> reported;
  auto abandoned = load_image(*open_db(url), {image, 1, false}, [&](uint32_t, uint64_t done, uint64_t) {
    reported.push_back(done);
    return false;
  });
  ASSERT_FALSE(abandoned);
  EXPECT_EQ(abandoned.error().kind, ErrorKind::Interrupted);
  // A complete session goes to SQLite as it is decoded, a block of the stream per statement step.
  constexpr uint64_t kBlock = SessionStream::kBlockEvents;
  EXPECT_EQ(reported, std::vector<uint64_t>{kBlock});
  auto db = open_db(url);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 0);

  reported.clear();
  auto loaded = load_image(*db, {image, std::nullopt, true}, [&](uint32_t session, uint64_t done, uint64_t) {
    if (session == 1) reported.push_back(done);
    return true;
  });
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ(reported, (std::vector<uint64_t>{kBlock, 2 * kBlock, 150'000}));
  // The load turns SECURE_DELETE off for itself only: the connection gets its own setting back.
  EXPECT_EQ(count(*db, "PRAGMA secure_delete"), count(*open_db(url), "PRAGMA secure_delete"));
  ASSERT_TRUE(db->query("PRAGMA secure_delete = 1", {}));
  auto again = load_image(*db, {image, 1, false}, {});  // already loaded: ends early, inside the load
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->front().already_loaded);
  EXPECT_EQ(count(*db, "PRAGMA secure_delete"), 1);

  const SessionData data = *TraceImage::open(image)->read_session(0);
  ASSERT_EQ(data.events.size(), 150'000u);
  const EventTiming timing{data.summary.header.capture_start_tsc, data.summary.header.tsc_hz};
  int64_t tsc_sum = 0, field_sum = 0, ns_sum = 0;
  for (const Event& e : data.events) {
    tsc_sum += static_cast<int64_t>(e.tsc % 1'000'003);
    field_sum += e.probe * 65'536 + e.code * 256 + e.lines;
    ns_sum += tsc_to_ns(e.tsc, timing) % 1'000'003;
  }
  const std::string trace = std::to_string((*loaded)[0].trace_id);
  auto stats = db->query(
      "SELECT count(*), count(DISTINCT seq), min(seq), max(seq), sum(tsc % 1000003), "
      "sum(probe * 65536 + code * 256 + lines), sum(time_ns % 1000003), count(time_ns) FROM events "
      "WHERE trace_id = " +
          trace,
      {});
  ASSERT_TRUE(stats) << stats.error().message;
  const auto& s = stats->rows.at(0);
  EXPECT_EQ(*s[0], "150000");
  EXPECT_EQ(*s[1], "150000");
  EXPECT_EQ(*s[2], std::to_string(data.events.front().seq));
  EXPECT_EQ(*s[3], std::to_string(data.events.back().seq));
  EXPECT_EQ(*s[4], std::to_string(tsc_sum));
  EXPECT_EQ(*s[5], std::to_string(field_sum));
  EXPECT_EQ(*s[6], std::to_string(ns_sum));
  EXPECT_EQ(*s[7], "150000");
  for (size_t i : {size_t{kBlock - 1}, size_t{kBlock}, size_t{2 * kBlock}}) {
    auto at = db->query("SELECT tsc, code FROM events WHERE trace_id = " + trace + " AND seq = $1",
                        std::vector<SqlValue>{static_cast<int64_t>(data.events[i].seq)});
    ASSERT_TRUE(at);
    ASSERT_EQ(at->rows.size(), 1u) << "event " << i;
    EXPECT_EQ(*at->rows[0][0], std::to_string(data.events[i].tsc));
    EXPECT_EQ(*at->rows[0][1], std::to_string(data.events[i].code));
  }

  const std::string untimed = std::to_string((*loaded)[1].trace_id);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events WHERE trace_id = " + untimed), 1'000);
  EXPECT_EQ(count(*db, "SELECT count(time_ns) FROM events WHERE trace_id = " + untimed), 0);
  // The bulk-load table is empty outside a load, and a database that has a table of that name is refused.
  EXPECT_EQ(count(*db, "SELECT count(*) FROM ett_load_events"), 0);
  ASSERT_TRUE(
      db->run_script("CREATE TABLE ett_load_events (trace_id, seq, probe, code, tsc, time_ns, lines)"));
  auto refused = open_database(url);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("reserves"), std::string::npos) << refused.error().message;
}

// Every table a load writes, as text, in key order (traces without loaded_at, the time of the load).
std::vector<std::vector<DbValue>> everything_loaded(Database& db) {
  std::string columns;
  for (const ColumnDef& column : trace_columns())
    if (std::string_view(column.name) != "loaded_at")
      columns += std::string(columns.empty() ? "" : ", ") + column.name;
  std::vector<std::vector<DbValue>> rows;
  for (const std::string& sql : {"SELECT trace_id, " + columns + " FROM traces ORDER BY trace_id",
                                 std::string("SELECT * FROM events ORDER BY trace_id, seq"),
                                 std::string("SELECT * FROM event_codes ORDER BY trace_id, probe, code"),
                                 std::string("SELECT * FROM event_blocks ORDER BY trace_id, first_seq"),
                                 std::string("SELECT * FROM probes ORDER BY trace_id, probe"),
                                 std::string("SELECT * FROM stalls ORDER BY trace_id, start_tsc")}) {
    auto table = db.query(sql, {});
    if (!table) throw std::runtime_error(table.error().message);
    rows.push_back({DbValue(sql)});
    rows.insert(rows.end(), table->rows.begin(), table->rows.end());
  }
  return rows;
}

// `ett load` of a complete session inserts its events as they are decoded (SessionStream): what it writes is
// what loading the whole decoded session writes, and loading it again finds it by the same content hash.
TEST(SqliteStreamedLoad, WritesWhatALoadOfTheWholeSessionWrites) {
  ett::test::TempDir dir;
  const std::string image = dir.file("trace.img");
  const uint64_t events = 3 * SessionStream::kBlockEvents + 12'345;
  ASSERT_TRUE(write_synth_capture(image, {events, 21, f::Layout::Double2x4}));
  ASSERT_TRUE(write_synth_capture(image, {5'000, 22, f::Layout::Quad4x2}));

  auto streamed = open_db("sqlite:" + dir.file("streamed.db"));
  auto loaded = load_image(*streamed, {image, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].events, events);
  EXPECT_EQ((*loaded)[0].health, "ok");

  auto whole = open_db("sqlite:" + dir.file("whole.db"));
  auto opened = TraceImage::open(image);
  ASSERT_TRUE(opened);
  for (size_t index = 0; index < 2; ++index) {
    const SessionData data = *opened->read_session(index);
    const TraceRow row = make_trace_row(opened->label(), data.summary, data.events);
    auto outcome = whole->load_trace(row, data.events, data.summary.header.capture_start_tsc,
                                     data.summary.header.tsc_hz, {});
    ASSERT_TRUE(outcome) << outcome.error().message;
    EXPECT_EQ(outcome->trace_id, (*loaded)[index].trace_id);
  }
  const auto expected = everything_loaded(*whole);
  const auto got = everything_loaded(*streamed);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_GT(got.size(), events);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "row " << i;

  auto again = load_image(*streamed, {image, std::nullopt, true});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE((*again)[0].already_loaded);
  EXPECT_TRUE((*again)[0].repaired.empty()) << (*again)[0].repaired;
  EXPECT_TRUE((*again)[1].already_loaded);
}

// A bad chunk past the first block is found after rows went in: the load is rolled back and says why, and
// --all skips the session and loads the others.
TEST(SqliteStreamedLoad, ABadChunkFoundMidwayLeavesNothingAndAllSkipsTheSession) {
  ett::test::TempDir dir;
  const std::string image = dir.file("trace.img");
  ASSERT_TRUE(write_synth_capture(image, {3 * SessionStream::kBlockEvents, 31, f::Layout::Double2x4}));
  ASSERT_TRUE(write_synth_capture(image, {4'000, 32, f::Layout::Double2x4}));
  const uint64_t bad_chunk = 2 * SessionStream::kBlockEvents / f::kRecordsPerChunk + 3;
  {
    const uint64_t header_lba = TraceImage::open(image)->sessions()[0].start_lba;
    ett::test::TestDiskWriter writer(image);
    writer.xor_byte(ett::test::TestDiskWriter::chunk_lba(header_lba, bad_chunk) * f::kSectorSize + 999, 0x10);
  }
  const std::string url = "sqlite:" + dir.file("traces.db");
  auto db = open_db(url);
  std::vector<uint64_t> reported;
  auto refused = load_image(*db, {image, 1, false}, [&](uint32_t, uint64_t done, uint64_t) {
    reported.push_back(done);
    return true;
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::BadCrc);
  EXPECT_NE(refused.error().message.find(fmt::format("chunk {} (LBA", bad_chunk)), std::string::npos)
      << refused.error().message;
  ASSERT_FALSE(reported.empty());
  EXPECT_GE(reported.back(), 2 * SessionStream::kBlockEvents) << "rows went in before the bad chunk";
  for (const char* table : {"traces", "events", "event_codes", "event_blocks", "probes", "stalls"})
    EXPECT_EQ(count(*db, fmt::format("SELECT count(*) FROM {}", table)), 0) << table;

  auto all = load_image(*db, {image, std::nullopt, true});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_NE((*all)[0].skipped.find("bad CRC"), std::string::npos) << (*all)[0].skipped;
  EXPECT_TRUE((*all)[1].skipped.empty());
  EXPECT_EQ((*all)[1].trace_id, 1);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 4'000);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM traces"), 1);
}

// A session whose dump was cut off (status writing) is decoded whole first: the events its good chunks hold,
// health partial, and found again by its content hash.
TEST(SqliteStreamedLoad, APartialSessionLoadsWhatItsGoodChunksHold) {
  ett::test::TempDir dir;
  const std::string image = dir.file("cut.img");
  ett::test::make_blank_disk(image);
  ett::test::SessionSpec cut;
  cut.records = ett::test::make_records(3 * f::kRecordsPerChunk);
  cut.status = f::SessionStatus::Writing;
  cut.skip_chunk = {false, true, false};
  ett::test::TestDiskWriter(image).append(cut);
  auto db = open_db("sqlite:" + dir.file("t.db"));
  auto loaded = load_image(*db, {image, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ((*loaded)[0].health, "partial");
  EXPECT_EQ((*loaded)[0].events, 2 * f::kRecordsPerChunk);
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 2 * f::kRecordsPerChunk);
  EXPECT_EQ(count(*db, "SELECT sum(events) FROM event_codes"), 2 * f::kRecordsPerChunk);
  EXPECT_EQ(count(*db, fmt::format("SELECT count(*) FROM events WHERE seq BETWEEN {} AND {}",
                                   f::kRecordsPerChunk, 2 * f::kRecordsPerChunk - 1)),
            0);
  auto again = load_image(*db, {image, std::nullopt, false});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE((*again)[0].already_loaded);
}

// The load computes time_ns in 64-bit arithmetic where it can (sqlite.cpp): every way it takes gives what
// tsc_to_ns gives, for events long before and after the capture start, at rates from 1 kHz to past 2^34 Hz.
TEST(SqliteBulkLoad, TimesFarFromTheCaptureStartAreThoseOfTscToNs) {
  ett::test::TempDir dir;
  const std::string image = dir.file("far.img");
  ett::test::make_blank_disk(image);
  const std::vector<uint64_t> rates = {1'000,
                                       2'999'999'999,
                                       3'811'528'000,
                                       uint64_t{1} << 34,
                                       (uint64_t{1} << 34) + 1,
                                       uint64_t{1} << 40,
                                       (uint64_t{1} << 40) + 7};
  {
    ett::test::TestDiskWriter writer(image);
    for (uint64_t hz : rates) {
      ett::test::SessionSpec spec;
      spec.tsc_hz = hz;
      spec.capture_start_tsc = uint64_t{1} << 50;
      // From 2^45 ticks before the start to about 2^45 after in uneven steps, one of which lands just after
      // the start (4e9 ticks): every way of the computation is taken.
      uint64_t tsc = spec.capture_start_tsc - (uint64_t{1} << 45);
      for (int i = 0; i < 2'000; ++i) {
        f::EventRecord record{};
        record.tsc = tsc;
        record.probe = 1;
        record.code = static_cast<uint8_t>(1 + i % 2);
        spec.records.push_back(record);
        tsc += i == 999 ? (uint64_t{1} << 45) - 999 * 35'184'372'089ull - 3 : 35'184'372'089ull + i * 7'919;
      }
      writer.append(spec);
    }
  }
  auto db = open_db("sqlite:" + dir.file("t.db"));
  auto loaded = load_image(*db, {image, std::nullopt, true});
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), rates.size());
  auto opened = TraceImage::open(image);
  ASSERT_TRUE(opened);
  for (size_t s = 0; s < rates.size(); ++s) {
    const SessionData data = *opened->read_session(s);
    const EventTiming timing{data.summary.header.capture_start_tsc, data.summary.header.tsc_hz};
    auto rows = db->query("SELECT tsc, time_ns FROM events WHERE trace_id = $1 ORDER BY seq",
                          std::vector<SqlValue>{(*loaded)[s].trace_id});
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->rows.size(), data.events.size());
    int negative = 0;
    for (size_t i = 0; i < data.events.size(); ++i) {
      const int64_t expected = tsc_to_ns(data.events[i].tsc, timing);
      negative += expected < 0;
      ASSERT_EQ(*rows->rows[i][1], std::to_string(expected)) << "rate " << rates[s] << ", event " << i;
    }
    EXPECT_GT(negative, 900) << "rate " << rates[s];
  }
}

TEST(DbUrl, EnginesAndErrors) {
  auto sqlite = parse_db_url("sqlite:traces.db");
  ASSERT_TRUE(sqlite);
  EXPECT_EQ(sqlite->engine, DbEngine::Sqlite);
  EXPECT_EQ(sqlite->target, "traces.db");
  EXPECT_EQ(parse_db_url("sqlite:///tmp/x.db")->target, "/tmp/x.db");
  auto pg = parse_db_url("postgresql://u@h:5/db");
  ASSERT_TRUE(pg);
  EXPECT_EQ(pg->engine, DbEngine::Postgres);
  EXPECT_FALSE(parse_db_url("traces.db"));
  EXPECT_FALSE(parse_db_url("sqlite:"));
  EXPECT_FALSE(parse_db_url("mysql://x"));
}

using ett::test::CountedRows;
using ett::test::RefusingRows;

// query_rows hands a big result over in batches, the rows query() gives; an error stops it.
TEST(SqliteQueryRows, ABigResultComesInBatchesWithTheRowsOfQuery) {
  ett::test::TempDir dir;
  auto db = open_database("sqlite:" + dir.file("rows.db"));
  ASSERT_TRUE(db) << db.error().message;
  const std::string sql =
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) SELECT i, i * 2 AS "
      "twice, "
      "CASE WHEN i % 3 = 0 THEN NULL ELSE 'r' || i END AS text FROM n";
  const SqlValue count[] = {int64_t{10'000}};
  CountedRows streamed;
  ASSERT_TRUE((*db)->query_rows(sql, count, streamed));
  auto whole = (*db)->query(sql, count);
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(streamed.all.table.columns, (std::vector<std::string>{"i", "twice", "text"}));
  EXPECT_EQ(streamed.all.table.rows, whole->rows);
  EXPECT_EQ(whole->rows.size(), 10'000u);
  EXPECT_GE(streamed.batches, 3u);
  RefusingRows refusing;
  auto refused = (*db)->query_rows(sql, count, refusing);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "no room");
}

// `ett sql`: the rows of the last statement that returns any; streamed when it ends the script (comments and
// empty statements after it aside), kept whole when a later statement might still have rows of its own.
TEST(SqliteScriptRows, TheLastStatementsRowsStreamAndAnEarlierOnesAreKeptWhole) {
  ett::test::TempDir dir;
  auto db = open_database("sqlite:" + dir.file("script.db"));
  ASSERT_TRUE(db) << db.error().message;
  const std::string make =
      "CREATE TEMP TABLE t AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
      "WHERE i < 10000) SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'r' || i END AS text FROM n; ";
  CountedRows last;
  ASSERT_TRUE((*db)->run_script_rows(make + "SELECT * FROM t; -- the end\n ;", last));
  auto whole = (*db)->query("SELECT * FROM t", {});
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(last.all.table.columns, (std::vector<std::string>{"i", "text"}));
  EXPECT_EQ(last.all.table.rows, whole->rows);
  EXPECT_GE(last.batches, 3u);

  CountedRows kept;
  ASSERT_TRUE((*db)->run_script_rows("SELECT * FROM t; CREATE TEMP TABLE u (a)", kept));
  EXPECT_EQ(kept.all.table.rows, whole->rows);
  EXPECT_EQ(kept.batches, 1u);
  EXPECT_TRUE((*db)->query("SELECT * FROM u", {}));

  CountedRows later;
  ASSERT_TRUE((*db)->run_script_rows("SELECT * FROM t; SELECT 7 AS seven /* c */", later));
  EXPECT_EQ(later.all.table.columns, std::vector<std::string>{"seven"});
  EXPECT_EQ(later.all.table.rows, (std::vector<std::vector<DbValue>>{{"7"}}));

  CountedRows none;
  ASSERT_TRUE((*db)->run_script_rows("CREATE TEMP TABLE v (a); INSERT INTO v VALUES (1)", none));
  EXPECT_TRUE(none.all.table.columns.empty());
  EXPECT_EQ(none.batches, 0u);

  RefusingRows refusing;
  auto refused = (*db)->run_script_rows("SELECT * FROM t", refusing);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "no room");
  auto parameter = (*db)->run_script_rows("SELECT ?1", none);
  ASSERT_FALSE(parameter);
  EXPECT_NE(parameter.error().message.find("takes no parameters"), std::string::npos);
}

TEST(DbOutput, AlignedTableAndCsv) {
  ResultTable table;
  table.columns = {"seq", "label"};
  table.rows = {{std::string("5"), std::string("node A")},
                {std::string("12345"), std::nullopt},
                {std::string("7"), std::string("a,\"b\"")}};
  EXPECT_EQ(format_table(table),
            "  seq  label\n"
            "-----  ------\n"
            "    5  node A\n"
            "12345\n"
            "    7  a,\"b\"\n"
            "(3 rows)\n");
  EXPECT_EQ(format_csv(table), "seq,label\n5,node A\n12345,\n7,\"a,\"\"b\"\"\"\n");
}

}  // namespace

namespace {

// seq, probe, code, tsc, time_ns (-1 for NULL) and lines of every row the typed reader hands on.
std::vector<std::array<int64_t, 6>> read_rows(Database& db, int64_t trace, size_t* batches = nullptr) {
  std::vector<std::array<int64_t, 6>> rows;
  auto read = db.read_events(trace, [&](std::span<const EventRow> batch) -> Status {
    if (batches) ++*batches;
    for (const EventRow& r : batch)
      rows.push_back({static_cast<int64_t>(r.seq), r.probe, r.code, static_cast<int64_t>(r.tsc),
                      r.has_time_ns ? r.time_ns : -1, r.lines});
    return {};
  });
  if (!read) throw std::runtime_error(read.error().message);
  return rows;
}

// The row of seq `seq` in EventReader.HeldPartsAreHandedOnWholeAndInOrder: every field set, with values from
// all over their ranges (the TSC and time_ns jump by up to 2^64 from one row to the next), time_ns read or
// not (0 when not, as the readers leave it).
EventRow held_test_row(int64_t seq) {
  const auto n = static_cast<uint64_t>(seq);
  EventRow row;
  row.seq = n;
  row.tsc = n % 7 == 0 ? UINT64_MAX - n : n * 3 + (n % 5 == 0 ? uint64_t{1} << 62 : 0);
  row.has_time_ns = n % 2 == 0;
  if (row.has_time_ns)
    row.time_ns = n % 3 == 0 ? INT64_MAX - seq : n % 3 == 1 ? INT64_MIN + seq : -seq * 1000;
  row.probe = static_cast<uint8_t>(n);
  row.code = static_cast<uint8_t>(n * 7);
  row.lines = static_cast<uint8_t>(n * 13);
  return row;
}

}  // namespace

// read_in_order over parts far bigger than what it holds per chunk, taken in batches of uneven sizes: the
// sink gets every row once, with every field as it was read, in seq order (the first part as it came, then
// the others), never a batch bigger than kEventBatchRows, and a restarted part's earlier rows are dropped.
TEST(EventReader, HeldPartsAreHandedOnWholeAndInOrder) {
  const std::vector<SeqRange> parts = {{0, 99'999}, {100'000, 799'999}, {800'000, 1'299'999}};
  bool restarted = false;
  auto read = [&](EventPartSink& sink) -> Status {
    ETT_TRY(sink.begin(parts));
    std::vector<EventRow> batch;
    // The last part first (the threads of a real read run at once), half of it twice: once before a restart.
    for (size_t part : {size_t{2}, size_t{2}, size_t{1}, size_t{0}}) {
      const bool half = part == 2 && !restarted;
      const int64_t last = half ? (parts[part].first + parts[part].last) / 2 : parts[part].last;
      for (int64_t seq = parts[part].first; seq <= last;) {
        batch.clear();
        for (int64_t n = 1 + seq % 4096; n > 0 && seq <= last; --n, ++seq)
          batch.push_back(held_test_row(seq));
        ETT_TRY(sink.take(part, batch));
      }
      if (half) {
        restarted = true;
        ETT_TRY(sink.restart(part));
      }
    }
    return {};
  };
  uint64_t next = 0;
  size_t largest = 0;
  ASSERT_TRUE(read_in_order(read, [&](std::span<const EventRow> rows) -> Status {
    largest = std::max(largest, rows.size());
    for (const EventRow& row : rows) {
      const EventRow want = held_test_row(static_cast<int64_t>(next));
      if (row.seq != want.seq || row.tsc != want.tsc || row.time_ns != want.time_ns ||
          row.has_time_ns != want.has_time_ns || row.probe != want.probe || row.code != want.code ||
          row.lines != want.lines)
        return make_error(ErrorKind::Io, "row " + std::to_string(row.seq) + " where " + std::to_string(next));
      ++next;
    }
    return {};
  }));
  EXPECT_EQ(next, 1'300'000u);
  EXPECT_LE(largest, kEventBatchRows);
}

// Held rows keep their seq as an offset within a chunk and their time_ns beside them only from the first row
// that has one: a part whose seqs jump by more than 2^32, whose time_ns starts in the middle of a chunk, and
// one whose only time_ns is a single row, come back field for field.
TEST(EventReader, HeldRowsKeepFarSeqsAndTimesThatStartMidChunk) {
  auto make_row = [](uint64_t seq, bool with_time) {
    EventRow row = held_test_row(static_cast<int64_t>(seq % 1'000'000));
    row.seq = seq;
    row.has_time_ns = with_time;
    row.time_ns = with_time ? -static_cast<int64_t>(seq) * 3 : 0;
    return row;
  };
  const uint64_t far = (uint64_t{1} << 33) + 5;
  std::vector<std::vector<EventRow>> parts(3);
  for (uint64_t seq = 0; seq < 1000; ++seq) parts[0].push_back(make_row(seq, seq % 3 == 0));
  for (uint64_t seq = 1000; seq < 601'000; ++seq) parts[1].push_back(make_row(seq, seq >= 301'000));
  for (uint64_t seq = far; seq < far + 10; ++seq) parts[1].push_back(make_row(seq, false));
  for (uint64_t seq = far + 10; seq < far + 20'000; ++seq)
    parts[2].push_back(make_row(seq, seq == far + 15'000));
  std::vector<EventRow> want;
  for (const std::vector<EventRow>& part : parts) want.insert(want.end(), part.begin(), part.end());
  auto read = [&](EventPartSink& sink) -> Status {
    const std::vector<SeqRange> ranges(parts.size());
    ETT_TRY(sink.begin(ranges));
    for (size_t part = parts.size(); part-- > 0;)
      for (size_t begin = 0; begin < parts[part].size(); begin += 3000) {
        const std::span<const EventRow> rows(parts[part]);
        ETT_TRY(sink.take(part, rows.subspan(begin, std::min<size_t>(3000, rows.size() - begin))));
      }
    return {};
  };
  size_t next = 0;
  ASSERT_TRUE(read_in_order(read, [&](std::span<const EventRow> rows) -> Status {
    for (const EventRow& row : rows) {
      const EventRow& w = want.at(next);
      if (row.seq != w.seq || row.tsc != w.tsc || row.time_ns != w.time_ns ||
          row.has_time_ns != w.has_time_ns || row.probe != w.probe || row.code != w.code ||
          row.lines != w.lines)
        return make_error(ErrorKind::Io,
                          "row " + std::to_string(row.seq) + " where " + std::to_string(w.seq));
      ++next;
    }
    return {};
  }));
  EXPECT_EQ(next, want.size());
}

// The first part, handed on as it comes, read again from its start (its rows were out of seq order): a stream
// that can start again is told so and then gets every row once; one that cannot ends with an error.
TEST(EventReader, AFirstPartReadAgainRestartsTheStreamOrFails) {
  const std::vector<SeqRange> parts = {{0, 9'999}, {10'000, 19'999}};
  auto read = [&](EventPartSink& sink) -> Status {
    ETT_TRY(sink.begin(parts));
    EXPECT_TRUE(sink.restartable(1));
    std::vector<EventRow> batch;
    auto send = [&](size_t part, int64_t first, int64_t last) -> Status {
      for (int64_t seq = first; seq <= last;) {
        batch.clear();
        for (int64_t n = 0; n < 1000 && seq <= last; ++n, ++seq)
          batch.push_back(EventRow{.seq = uint64_t(seq)});
        ETT_TRY(sink.take(part, batch));
      }
      return {};
    };
    ETT_TRY(send(1, 10'000, 19'999));
    ETT_TRY(send(0, 0, 4'999));
    if (!sink.restartable(0)) return sink.restart(0);
    ETT_TRY(sink.restart(0));
    return send(0, 0, 9'999);
  };
  uint64_t next = 0, restarts = 0;
  auto sink = [&](std::span<const EventRow> rows) -> Status {
    for (const EventRow& row : rows)
      if (row.seq != next++) return make_error(ErrorKind::Io, "out of order");
    return {};
  };
  ASSERT_TRUE(read_in_order(read, sink, [&]() -> Status {
    ++restarts;
    next = 0;
    return {};
  }));
  EXPECT_EQ(restarts, 1u);
  EXPECT_EQ(next, 20'000u);
  next = 0;
  const Status refused = read_in_order(read, sink);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("out of seq order"), std::string::npos) << refused.error().message;
}

// A trace big enough to be read as two halves on two connections, with gaps in its seq, a NULL time and
// another trace's rows on both sides of its key range: the typed reader hands on exactly the text query's
// rows, in seq order, and a sink's error in either half ends the read with that error.
TEST(SqliteReader, ABigTraceReadInTwoHalvesGivesTheRowsOfTheTextQuery) {
  ett::test::TempDir dir;
  auto db = open_db("sqlite:" + dir.file("big.db"));
  ASSERT_TRUE(db->run_script(
      "WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < 399999) "
      "INSERT INTO events (trace_id, seq, probe, code, tsc, time_ns, lines, flags, aux) "
      "SELECT 1 + (x % 3), (x / 3) * 2 + (x / 3 > 50000) * 7, 1 + x % 2, x % 16, 1000 + x * 3, "
      "CASE WHEN x = 12345 THEN NULL ELSE x * 5 END, x % 256, 0, 0 FROM n"));
  auto text = db->query(
      "SELECT seq, probe, code, tsc, coalesce(time_ns, -1), lines FROM events WHERE trace_id = 2 ORDER BY "
      "seq",
      {});
  ASSERT_TRUE(text);
  size_t batches = 0;
  const auto rows = read_rows(*db, 2, &batches);
  ASSERT_EQ(rows.size(), text->rows.size());
  ASSERT_GE(rows.back()[0] - rows.front()[0], int64_t{1} << 18);  // a seq range read in two halves
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t c = 0; c < 6; ++c) ASSERT_EQ(*text->rows[i][c], std::to_string(rows[i][c])) << i;
  // Full batches but for each half's last one.
  EXPECT_LE(batches, (rows.size() + kEventBatchRows - 1) / kEventBatchRows + 1);
  EXPECT_EQ(read_rows(*db, 1).size(), 133'334u);
  EXPECT_EQ(read_rows(*db, 3).back()[0], 2 * 133'332 + 7);
  EXPECT_TRUE(read_rows(*db, 4).empty());
  // An error from the sink: the first batch, or one of the upper half's (handed on after the lower half).
  for (size_t fail_at : {size_t{1}, batches - 1}) {
    size_t calls = 0;
    auto stopped = db->read_events(2, [&](std::span<const EventRow>) -> Status {
      if (++calls == fail_at) return make_error(ErrorKind::Usage, "enough");
      return {};
    });
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().message, "enough");
    EXPECT_EQ(calls, fail_at);
  }
  EXPECT_EQ(count(*db, "SELECT count(*) FROM events"), 400'000);
}

namespace {

// Every event of `load_capture(trace)` is the text query's row, in seq order, its time from the TSC (a rate)
// or the stored time_ns (no rate).
void expect_capture_is_the_text_query(Database& db, int64_t trace) {
  auto capture = load_capture(db, trace);
  ASSERT_TRUE(capture) << capture.error().message;
  auto text =
      db.query("SELECT seq, probe, code, tsc, lines, time_ns FROM events WHERE trace_id = $1 ORDER BY seq",
               std::vector<SqlValue>{trace});
  ASSERT_TRUE(text) << text.error().message;
  ASSERT_EQ(capture->events.size(), text->rows.size());
  const CaptureInfo& info = capture->info;
  for (size_t i = 0; i < text->rows.size(); ++i) {
    const auto& row = text->rows[i];
    const AnalysisEvent& event = capture->events[i];
    ASSERT_EQ(std::to_string(event.seq), *row[0]) << i;
    ASSERT_EQ(std::to_string(event.probe), *row[1]) << i;
    ASSERT_EQ(std::to_string(event.code), *row[2]) << i;
    ASSERT_EQ(std::to_string(event.tsc), *row[3]) << i;
    ASSERT_EQ(std::to_string(event.lines), *row[4]) << i;
    const double time =
        info.tsc_hz
            ? ticks_to_ns(static_cast<double>(static_cast<int64_t>(event.tsc - info.capture_start_tsc)),
                          info.tsc_hz)
            : std::stod(*row[5]);
    ASSERT_EQ(event.time_ns, time) << i;
  }
}

// A new SQLite file in `dir` with one synthetic trace of 300,000 events (read as two parts); its trace_id.
int64_t load_big_trace(const ett::test::TempDir& dir, uint64_t seed, std::unique_ptr<Database>& db) {
  const std::string image = dir.file("big.img");
  if (!write_synth_capture(image, {300'000, seed, f::Layout::Double2x4})) throw std::runtime_error("synth");
  db = open_db("sqlite:" + dir.file("big.db"));
  auto loaded = load_image(*db, {image, std::nullopt, false});
  if (!loaded) throw std::runtime_error(loaded.error().message);
  return (*loaded)[0].trace_id;
}

}  // namespace

namespace {

// The rows of a read that needs no time_ns (what every read of a trace with a TSC rate is), as read_rows
// gives them.
Expected<std::vector<std::array<int64_t, 6>>> read_without_time(Database& db, int64_t trace) {
  std::vector<std::array<int64_t, 6>> rows;
  EventColumns no_time;
  no_time.time_ns = false;
  ETT_TRY(db.read_events(
      trace,
      [&](std::span<const EventRow> batch) -> Status {
        for (const EventRow& r : batch)
          rows.push_back(
              {static_cast<int64_t>(r.seq), r.probe, r.code, static_cast<int64_t>(r.tsc), -1, r.lines});
        return {};
      },
      no_time));
  return rows;
}

}  // namespace

// A load writes each trace's events into event_packs too, which reads without time_ns take: they give the
// events rows (time_ns left out), whatever the trace's size. Which read ran shows when a pack is changed; a
// damaged pack, or packs that do not hold every event, an error that names the trace, the pack or the count
// and the way past it; a trace without packs is read from the rows.
TEST(SqliteReader, PackedReadsGiveTheEventsRows) {
  ett::test::TempDir dir;
  std::unique_ptr<Database> db;
  const int64_t big = load_big_trace(dir, 8, db);
  const std::string small = dir.file("small.img");
  ASSERT_TRUE(write_synth_capture(small, {3'000, 9, f::Layout::Double2x4}));
  auto loaded = load_image(*db, {small, std::nullopt, false});
  ASSERT_TRUE(loaded) << loaded.error().message;
  const int64_t second = (*loaded)[0].trace_id;
  auto rows_without_time = [&](int64_t trace) {
    std::vector<std::array<int64_t, 6>> rows = read_rows(*db, trace);
    for (auto& row : rows) row[4] = -1;
    return rows;
  };
  for (const auto& [trace, size] : {std::pair{big, int64_t{300'000}}, std::pair{second, int64_t{3'000}}}) {
    EXPECT_EQ(count(*db, fmt::format("SELECT sum(events) FROM event_packs WHERE trace_id = {}", trace)),
              size);
    EXPECT_GT(count(*db, fmt::format("SELECT count(*) FROM event_packs WHERE trace_id = {}", trace)), 1);
    auto packed = read_without_time(*db, trace);
    ASSERT_TRUE(packed) << packed.error().message;
    ASSERT_EQ(packed->size(), static_cast<size_t>(size));
    EXPECT_EQ(*packed, rows_without_time(trace)) << "trace " << trace;
  }
  EXPECT_LE(count(*db, "SELECT max(length(data)) FROM event_packs"), int64_t{kPackBytes});
  // Which read it was: the last byte of the first pack (the lines of its last event) changed.
  const std::string first_pack = fmt::format(
      "trace_id = {0} AND first_seq = (SELECT min(first_seq) FROM event_packs WHERE trace_id = {0})", second);
  const auto last = static_cast<size_t>(count(*db, "SELECT events - 1 FROM event_packs WHERE " + first_pack));
  const int64_t lines = rows_without_time(second).at(last)[5];
  ASSERT_TRUE(db->run_script(fmt::format(
      "UPDATE event_packs SET data = CAST(substr(data, 1, length(data) - 1) || x'{:02x}' AS BLOB) "
      "WHERE {}",
      255 - lines, first_pack)));
  auto changed = read_without_time(*db, second);
  ASSERT_TRUE(changed) << changed.error().message;
  EXPECT_EQ(changed->at(last)[5], 255 - lines);
  EXPECT_EQ(rows_without_time(second).at(last)[5], lines);
  // Damaged: data cut short; a pack that overlaps the one before.
  ASSERT_TRUE(db->run_script("UPDATE event_packs SET data = substr(data, 1, 100) WHERE " + first_pack));
  auto cut = read_without_time(*db, second);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find(fmt::format("event_packs of trace {}: the pack of seqs 0-", second)),
            std::string::npos)
      << cut.error().message;
  EXPECT_NE(cut.error().message.find(fmt::format(
                "after DELETE FROM event_packs WHERE trace_id = {} the trace is read from events", second)),
            std::string::npos)
      << cut.error().message;
  ASSERT_TRUE(db->run_script(
      fmt::format("UPDATE event_packs SET first_seq = first_seq - 1 WHERE trace_id = {0} AND first_seq = "
                  "(SELECT max(first_seq) FROM event_packs WHERE trace_id = {0})",
                  big)));
  auto overlapping = read_without_time(*db, big);
  ASSERT_FALSE(overlapping);
  EXPECT_NE(overlapping.error().message.find("overlaps the one before"), std::string::npos)
      << overlapping.error().message;
  // Packs that do not hold every event: the read stops and says what they hold.
  ASSERT_TRUE(db->run_script(fmt::format(
      "DELETE FROM event_packs WHERE trace_id = {0} AND first_seq = (SELECT max(first_seq) FROM event_packs "
      "WHERE trace_id = {0})",
      big)));
  const int64_t held =
      count(*db, fmt::format("SELECT sum(events) FROM event_packs WHERE trace_id = {}", big));
  ASSERT_LT(held, 300'000);
  auto short_of_events = read_without_time(*db, big);
  ASSERT_FALSE(short_of_events);
  EXPECT_NE(short_of_events.error().message.find(fmt::format("they hold {} of its 300000 events", held)),
            std::string::npos)
      << short_of_events.error().message;
  // No packs (a trace loaded before event_packs, or packs deleted as the message says): read from the rows.
  ASSERT_TRUE(db->run_script(
      fmt::format("DELETE FROM event_packs WHERE trace_id = {}; DELETE FROM event_packs WHERE trace_id = {}",
                  second, big)));
  for (int64_t trace : {big, second}) {
    auto read = read_without_time(*db, trace);
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(*read, rows_without_time(trace)) << trace;
  }
}

// A trace big enough to be read as two parts, each placed by load_capture where its seqs put it: with gaps
// in seq (single rows and a run across the middle) the events come closed up and in seq order; with no TSC
// rate the times are the stored time_ns.
TEST(SqliteReader, LoadCaptureGivesEveryRowInSeqOrderAcrossGapsWithOrWithoutARate) {
  ett::test::TempDir dir;
  std::unique_ptr<Database> db;
  const int64_t trace = load_big_trace(dir, 5, db);
  expect_capture_is_the_text_query(*db, trace);
  // Rows deleted by hand: the packs no longer hold them and go too, and the trace is read from its rows.
  ASSERT_TRUE(db->run_script(
      "DELETE FROM events WHERE seq % 1000 = 7 OR seq BETWEEN 140000 AND 160000; DELETE FROM event_packs"));
  expect_capture_is_the_text_query(*db, trace);
  ASSERT_TRUE(db->run_script("UPDATE traces SET tsc_hz = 0"));
  expect_capture_is_the_text_query(*db, trace);
}

namespace {

// Reads through `inner`, but hands the first batch of part 0 twice with a restart of the part between them:
// what PostgreSQL's reader does when a plain scan meets rows out of seq order.
class RestartingReads final : public Database {
 public:
  explicit RestartingReads(Database& inner) : m_inner(inner) {}
  DbEngine engine() const override { return m_inner.engine(); }
  Status ensure_schema() override { return m_inner.ensure_schema(); }
  Expected<ResultTable> query(const std::string& sql, std::span<const SqlValue> params) override {
    return m_inner.query(sql, params);
  }
  Status query_rows(const std::string& sql, std::span<const SqlValue> params, RowSink& sink) override {
    return m_inner.query_rows(sql, params, sink);
  }
  Expected<ResultTable> run_script(const std::string& sql) override { return m_inner.run_script(sql); }
  Status run_script_rows(const std::string& sql, RowSink& sink) override {
    return m_inner.run_script_rows(sql, sink);
  }
  Status read_event_parts(int64_t trace_id, const EventColumns& columns, EventPartSink& sink) override {
    Once once(sink, restarts);
    return m_inner.read_event_parts(trace_id, columns, once);
  }
  int restarts = 0;

 protected:
  Status begin_load() override { return make_error(ErrorKind::Usage, "no loads here"); }
  Status end_load(bool) override { return {}; }
  Status insert_events(int64_t, const EventSource&, uint64_t, uint64_t, const LoadProgress&) override {
    return make_error(ErrorKind::Usage, "no loads here");
  }
  Status scan_events(int64_t, const StoredEventSink&) override {
    return make_error(ErrorKind::Usage, "no scans here");
  }

 private:
  class Once final : public EventPartSink {
   public:
    Once(EventPartSink& sink, int& restarts) : m_sink(sink), m_restarts(restarts) {}
    Status begin(std::span<const SeqRange> parts) override { return m_sink.begin(parts); }
    Status take(size_t part, std::span<const EventRow> rows) override {
      if (part == 0 && m_restarts == 0) {
        ETT_TRY(m_sink.take(part, rows));
        ++m_restarts;
        ETT_TRY(m_sink.restart(part));
      }
      return m_sink.take(part, rows);
    }
    Status restart(size_t part) override { return m_sink.restart(part); }
    bool restartable(size_t part) const override { return m_sink.restartable(part); }

   private:
    EventPartSink& m_sink;
    int& m_restarts;
  };
  Database& m_inner;
};

}  // namespace

// The histogram counted as a big trace is read (two parts at once, merged) is the one counted over the whole
// capture: by code and by probe with a filter, by time, and when a part is read again from its start; by code
// and by probe without a filter the load's counts give the same rows without a read; a trace with no events
// left is refused by name.
TEST(SqliteReader, StoredHistogramCountsWhatTheWholeCaptureCounts) {
  ett::test::TempDir dir;
  std::unique_ptr<Database> db;
  const int64_t trace = load_big_trace(dir, 6, db);
  auto capture = load_capture(*db, trace);
  ASSERT_TRUE(capture) << capture.error().message;
  const std::pair<const char*, const char*> cases[] = {
      {"code", "XXXXXXX1"}, {"probe", "XXXX1XXX"}, {"time:1ms", ""}, {"code", ""}, {"probe", ""}};
  for (const auto& [by, match] : cases) {
    const bool tallied = !*match && std::string_view(by) != "time:1ms";
    const HistogramSpec spec = *parse_histogram_by(by);
    std::optional<TritPattern> filter;
    if (*match) filter = *parse_trits(match);
    const HistogramResult whole = histogram(capture->events, spec, filter);
    RestartingReads restarting(*db);
    auto stored = stored_histogram(*db, capture->info, spec, filter);
    auto restarted = stored_histogram(restarting, capture->info, spec, filter);
    ASSERT_TRUE(stored) << stored.error().message;
    ASSERT_TRUE(restarted) << restarted.error().message;
    EXPECT_EQ(restarting.restarts, tallied ? 0 : 1) << by;
    EXPECT_EQ(restarted->total, 300'000u) << by;
    ASSERT_EQ(restarted->rows.size(), whole.rows.size()) << by;
    for (size_t i = 0; i < whole.rows.size(); ++i)
      ASSERT_EQ(restarted->rows[i].count, whole.rows[i].count) << by;
    EXPECT_EQ(stored->total, 300'000u) << by;
    EXPECT_EQ(stored->matched, whole.matched) << by;
    if (filter) {
      EXPECT_LT(whole.matched, whole.total) << by;
    }
    ASSERT_EQ(stored->rows.size(), whole.rows.size()) << by;
    ASSERT_GT(whole.rows.size(), 1u) << by;
    for (size_t i = 0; i < whole.rows.size(); ++i) {
      ASSERT_EQ(stored->rows[i].label, whole.rows[i].label) << by << " " << i;
      ASSERT_EQ(stored->rows[i].count, whole.rows[i].count) << by << " " << i;
    }
  }
  // The tallies are what was loaded: a load whose events and packs were deleted by hand still has them.
  ASSERT_TRUE(db->run_script("DELETE FROM events; DELETE FROM event_packs"));
  auto tallied = stored_histogram(*db, capture->info, *parse_histogram_by("code"), std::nullopt);
  ASSERT_TRUE(tallied) << tallied.error().message;
  EXPECT_EQ(tallied->total, 300'000u);
  auto read = stored_histogram(*db, capture->info, *parse_histogram_by("code"), *parse_trits("XXXXXXXX"));
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("has no events"), std::string::npos) << read.error().message;
  ASSERT_TRUE(db->run_script("DELETE FROM event_codes"));
  auto none = stored_histogram(*db, capture->info, *parse_histogram_by("code"), std::nullopt);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("has no events"), std::string::npos) << none.error().message;
}

// The precision of a calibration trace from its steps streamed (stored_precision) is the one of the whole
// capture: with corrupt records (a TSC at or before the one before it) inside a batch, at a batch's first
// event and at the second part's first, and when the first part is read again from its start. Another
// capture reads no event and gives analyze_precision's refusal; a trace with no events is refused by name.
TEST(SqliteReader, StoredPrecisionIsTheWholeCapturesFromItsStepsAlone) {
  ett::test::TempDir dir;
  std::unique_ptr<Database> db;
  const int64_t trace = load_big_trace(dir, 8, db);
  auto plain = load_capture(*db, trace);
  ASSERT_TRUE(plain) << plain.error().message;
  Capture head;
  head.info = plain->info;
  const std::string refused = analyze_precision(*plain).error().message;
  auto other = stored_precision(*db, head, {});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, refused);

  ASSERT_TRUE(db->run_script(fmt::format(
      "UPDATE traces SET mode = 'calibrate' WHERE trace_id = {0}; "
      "UPDATE events SET tsc = tsc - 1000000000 WHERE trace_id = {0} AND seq IN (1000, {1}, 150000); "
      "DELETE FROM event_packs",
      trace, kEventBatchRows)));
  auto capture = load_capture(*db, trace);
  ASSERT_TRUE(capture) << capture.error().message;
  head.info = capture->info;
  auto whole = analyze_precision(*capture);
  ASSERT_TRUE(whole) << whole.error().message;
  size_t steps_before = 0;  // of the trace before the corruption (a record in the same poll is no step)
  for (size_t i = 1; i < plain->events.size(); ++i)
    steps_before += plain->events[i].tsc > plain->events[i - 1].tsc;
  EXPECT_LT(whole->steps, steps_before) << "a corrupt record is no step";
  const std::string expected = format_precision(*whole, OutputFormat::Json);
  auto stored = stored_precision(*db, head, {});
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(format_precision(*stored, OutputFormat::Json), expected);
  RestartingReads restarting(*db);
  auto restarted = stored_precision(restarting, head, {});
  ASSERT_TRUE(restarted) << restarted.error().message;
  EXPECT_EQ(restarting.restarts, 1);
  EXPECT_EQ(format_precision(*restarted, OutputFormat::Json), expected);

  ASSERT_TRUE(db->run_script("DELETE FROM events; DELETE FROM event_packs"));
  for (const char* mode : {"calibrate", "capture"}) {
    head.info.mode = mode;
    auto none = stored_precision(*db, head, {});
    ASSERT_FALSE(none) << mode;
    EXPECT_NE(none.error().message.find("has no events"), std::string::npos) << none.error().message;
  }
}

// The intervals gathered as a big trace streams (stored_intervals) are the whole capture's, the capture's
// stalls included (one inside the first part, one across the second part's first events), also when the
// first part is read again from its start; a trace with no events is refused by name.
TEST(SqliteReader, StoredIntervalsAreTheWholeCapturesWithItsStalls) {
  ett::test::TempDir dir;
  std::unique_ptr<Database> db;
  const int64_t trace = load_big_trace(dir, 9, db);
  auto events = db->query(fmt::format("SELECT tsc FROM events WHERE trace_id = {} AND seq IN (1000, 149999) "
                                      "ORDER BY seq",
                                      trace),
                          {});
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->rows.size(), 2u);
  ASSERT_TRUE(db->run_script(fmt::format(
      "INSERT INTO stalls (trace_id, start_tsc, length_ticks) VALUES ({0}, {1}, 400000), ({0}, {2}, 900000)",
      trace, std::stoll(*events->rows[0][0]) - 10, std::stoll(*events->rows[1][0]) - 10)));
  auto capture = load_capture(*db, trace);
  ASSERT_TRUE(capture) << capture.error().message;
  ASSERT_EQ(capture->stalls.size(), 2u);
  const double tau = 20'000;
  const IntervalsResult whole = analyze_intervals(capture->events, tau, capture->stalls, 2);
  uint64_t stalled = 0, close = 0;
  for (const ProbeIntervals& p : whole.probes) {
    stalled += p.stalled;
    close += p.close.size();
  }
  EXPECT_GT(stalled, 4u) << "the stalls touch intervals of both probes";
  EXPECT_GT(close, 0u);
  const std::string expected = format_intervals(whole, OutputFormat::Json);
  Capture head;
  head.info = capture->info;
  head.info.stall_count = 2;
  head.stalls = capture->stalls;
  auto stored = stored_intervals(*db, head, tau);
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(format_intervals(*stored, OutputFormat::Json), expected);
  RestartingReads restarting(*db);
  auto restarted = stored_intervals(restarting, head, tau);
  ASSERT_TRUE(restarted) << restarted.error().message;
  EXPECT_EQ(restarting.restarts, 1);
  EXPECT_EQ(format_intervals(*restarted, OutputFormat::Json), expected);

  ASSERT_TRUE(db->run_script("DELETE FROM events; DELETE FROM event_packs"));
  auto none = stored_intervals(*db, head, tau);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("has no events"), std::string::npos) << none.error().message;
  EXPECT_FALSE(require_events(*db, head.info));
}
