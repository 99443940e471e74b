// cli_test.cpp: the `ett` binary as a user meets it: wrong arguments destroy nothing (a trace disk given as
// the probe file, a mistyped database), every flag's output stays bounded, errors are one `ett:` line, and
// the conventions (--format, -o -, sql -, help, completion, man, -q, --version, progress on a terminal and
// Ctrl-C) hold on every verb. JSON is parsed, never searched as text.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "db/database.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"
#include "image/event_writer.h"
#include "image/session_writer.h"
#include "image/trace_image.h"
#include "support/child_peak.h"
#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

namespace fs = std::filesystem;
namespace f = ett::format;
using nlohmann::json;

class CliTest : public ::testing::Test {
 protected:
  // The real `ett` of this build, in the scratch directory, with `input` on its standard input.
  EttRun ett(const std::vector<std::string>& args, const std::string& input = "") {
    return run_ett_in(m_dir.file(""), args, input);
  }

  std::string path(const std::string& name) const { return m_dir.file(name); }

  TerminalRun ett_on_terminal(const std::vector<std::string>& args, const std::string& interrupt_at = "") {
    return run_ett_on_terminal(m_dir.file(""), args, interrupt_at);
  }

  // A synthetic capture loaded into sqlite:NAME.
  void load(const std::string& db = "t.db", int events = 2000) {
    ASSERT_EQ(ett({"synth", path("t.img"), "--events", std::to_string(events), "--seed", "7"}).status, 0);
    const EttRun loaded = ett({"load", path("t.img"), "--db", "sqlite:" + path(db)});
    ASSERT_EQ(loaded.status, 0) << loaded.err;
  }

  // A file stamped the way `ett qemu run` makes the probe file (see harness/shared_memory.cpp).
  std::string probe_file() {
    const std::string file = path("probe.shm");
    std::string bytes(vprobe::kMinSize, '\0');
    vprobe::Control control{};
    control.host_magic = vprobe::kHostMagic;
    control.file_version = vprobe::kFileVersion;
    std::memcpy(bytes.data() + vprobe::kControlOffset, &control, sizeof control);
    write_bytes(file, bytes);
    return file;
  }

  TempDir m_dir;
};

// One message on standard error, in the ett: style, naming the problem; nothing on standard output.
void expect_one_line_error(const EttRun& run, const std::string& words) {
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.err.rfind("ett: ", 0), 0u) << run.err;
  EXPECT_EQ(run.err_lines(), 1) << run.err;
  EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

// ---- data safety
// -------------------------------------------------------------------------------------------

TEST_F(CliTest, SignalRefusesEveryFileThatIsNotAProbeAndLeavesItAlone) {
  ASSERT_EQ(ett({"synth", path("trace.img"), "--events", "100"}).status, 0);
  std::string random(2 << 20, '\0');
  std::mt19937 generator(5);
  for (char& c : random) c = static_cast<char>(generator());
  write_bytes(path("random.bin"), random);
  ::mkdir(path("dir").c_str(), 0700);
  for (const std::string name : {"trace.img", "random.bin"}) {
    SCOPED_TRACE(name);
    const std::string before = slurp(path(name));
    const EttRun run = ett({"signal", "shm:" + path(name), "1", "1"});
    expect_one_line_error(run, "is not an ETT virtual probe file");
    EXPECT_TRUE(slurp(path(name)) == before) << "the file changed";
  }
  expect_one_line_error(ett({"signal", "shm:" + path("dir"), "1", "1"}), "not a regular file");
  EXPECT_EQ(ett({"ls", path("trace.img")}).status, 0) << "the trace disk is still one";

  // The real thing works: the probe's lines change.
  const std::string probe = probe_file();
  const EttRun sent = ett({"signal", "shm:" + probe, "1", "5"});
  EXPECT_EQ(sent.status, 0) << sent.err;
  EXPECT_EQ(slurp(probe)[vprobe::kLinesOffset], 5);

  // A probe file of another version is refused too, unchanged.
  std::string other = slurp(probe);
  const uint32_t version = vprobe::kFileVersion + 1;
  std::memcpy(other.data() + vprobe::kControlOffset + offsetof(vprobe::Control, file_version), &version, 4);
  write_bytes(probe, other);
  expect_one_line_error(ett({"signal", "shm:" + probe, "1", "6"}), "version");
  EXPECT_TRUE(slurp(probe) == other);
}

TEST_F(CliTest, HistogramRefusesMoreBucketsThanTheCapAndSaysHowToWiden) {
  load();
  const EttRun run = ett({"analyze", "histogram", "--by", "time:1ns", "--db", "sqlite:t.db"});
  expect_one_line_error(run, "buckets");
  EXPECT_NE(run.err.find("cap of 100000"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--max-buckets"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("use a bucket of at least"), std::string::npos) << run.err;
  // The same with JSON (which the OOM killer used to end).
  expect_one_line_error(
      ett({"analyze", "histogram", "--by", "time:1ns", "--format", "json", "--db", "sqlite:t.db"}),
      "--max-buckets");
  // A wide enough bucket works; the cap can be raised.
  const EttRun ok =
      ett({"analyze", "histogram", "--by", "time:1ms", "--format", "json", "--db", "sqlite:t.db"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json parsed = json::parse(ok.out);
  EXPECT_GT(parsed.dump().size(), 10u);
  const EttRun capped =
      ett({"analyze", "histogram", "--by", "time:1ms", "--max-buckets", "1", "--db", "sqlite:t.db"});
  expect_one_line_error(capped, "cap of 1:");

  // The cap is on the span of the events counted: a filter that passes only the first ten events (all lines
  // high there, never after) fits where the trace does not (2000 events over about 50 ms in 100 ns buckets).
  const EttRun marked =
      ett({"sql",
           "UPDATE events SET lines = CASE WHEN seq < 10 THEN 255 ELSE lines & 127 END; DELETE FROM "
           "event_packs",
           "--write", "--db", "sqlite:t.db"});
  ASSERT_EQ(marked.status, 0) << marked.err;
  expect_one_line_error(ett({"analyze", "histogram", "--by", "time:100ns", "--db", "sqlite:t.db"}),
                        "cap of 100000");
  const EttRun narrow = ett({"analyze", "histogram", "--by", "time:100ns", "--match", "11111111", "--format",
                             "json", "--db", "sqlite:t.db"});
  ASSERT_EQ(narrow.status, 0) << narrow.err;
  const json counted = json::parse(narrow.out);
  EXPECT_EQ(counted["total"], 2000);
  EXPECT_EQ(counted["matched"], 10);
  ASSERT_GT(counted["rows"].size(), 1u);
  EXPECT_LT(counted["rows"].size(), 100000u);
}

TEST_F(CliTest, ReadOnlyVerbsRefuseADatabaseThatDoesNotExist) {
  const std::vector<std::vector<std::string>> verbs = {
      {"query", "traces"},
      {"sql", "SELECT 1"},
      {"analyze", "histogram"},
      {"analyze", "intervals"},
      {"export", "--format", "csv"},
      {"report", "-o", "r.html"},
      {"label", "--probe", "1", "node A"},
      {"compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2"},
  };
  for (std::vector<std::string> args : verbs) {
    SCOPED_TRACE(args[0]);
    args.insert(args.end(), {"--db", "sqlite:typo.db"});
    expect_one_line_error(ett(args), "no such database file");
    EXPECT_FALSE(fs::exists(path("typo.db")));
    EXPECT_FALSE(fs::exists(path("r.html")));
  }
  EXPECT_EQ(ett({"query"}).status, 0) << "listing the queries needs no database";
}

TEST_F(CliTest, BadNumbersAreRefusedInOneLine) {
  load();
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"analyze", "durations", "--from", "1", "--to", "2", "--pi-ns", "-5"}, "--pi-ns"},
      {{"analyze", "durations", "--from", "1", "--to", "2", "--pi-ns", "nan"}, "--pi-ns"},
      {{"analyze", "intervals", "--tau-ns", "-1"}, "--tau-ns"},
      {{"analyze", "intervals", "--tau-ns", "inf"}, "--tau-ns"},
      {{"extract", "t.img", "--session", "-1"}, "--session"},
      {{"qemu", "run", "--disk", "q.img", "--run", "true", "--timeout", "0"},
       "not a number > 0 (see `ett help qemu run`)"},
      {{"analyze", "histogram", "--bins-typo", "3"}, "--bins-typo"},
  };
  for (auto [args, words] : bad) {
    SCOPED_TRACE(args[1]);
    if (args[0] == "analyze") args.insert(args.end(), {"--db", "sqlite:t.db"});
    const EttRun run = ett(args);
    expect_one_line_error(run, words);
    EXPECT_LT(run.err.size(), 300u) << run.err;
  }
  const EttRun exit_halt = ett({"qemu", "run", "--disk", "q.img", "--run", "true", "--append", "exit=halt"});
  expect_one_line_error(exit_halt, "sets exit=qemu itself");
  EXPECT_EQ(exit_halt.err.find("twice"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("q.img"))) << "refused before anything was made";
}

// ls lists every session, then its exit status says the worst it found (docs/guide/ett-command.md: 12
// corrupt, 13 truncated).
TEST_F(CliTest, LsExitStatusSaysCorruptOrTruncated) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "100", "--seed", "3"}).status, 0);
  std::string disk = slurp(path("t.img"));
  EXPECT_EQ(ett({"ls", path("t.img")}).status, 0);

  std::string corrupt = disk;
  corrupt[(f::kFirstSessionLba + 1) * f::kSectorSize + sizeof(f::ChunkHeader) + 40] ^= 0x01;
  write_bytes(path("c.img"), corrupt);
  const EttRun c = ett({"ls", path("c.img"), "--format", "json"});
  EXPECT_EQ(c.status, 12) << c.err;
  EXPECT_EQ(json::parse(c.out).at(0).at("status"), "corrupt");

  std::string cut = disk;
  cut.resize((f::kFirstSessionLba + 1) * f::kSectorSize + 1000);
  write_bytes(path("cut.img"), cut);
  const EttRun t = ett({"ls", path("cut.img"), "--format", "jsonl"});
  EXPECT_EQ(t.status, 13) << t.err;
  EXPECT_EQ(json::parse(t.out.substr(0, t.out.find('\n'))).at("status"), "truncated");
}

// One flipped byte in chunk 2 of a 20,000-event session: without --salvage extract and load refuse it (12);
// with it they keep every event of the other chunks, name exactly the seqs lost (chunk 2 holds seqs
// 2*kRecordsPerChunk to 3*kRecordsPerChunk - 1), store them in `losses`, and the analyses say so.
TEST_F(CliTest, SalvageKeepsTheGoodChunksAndNamesTheLostSeqs) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "20000", "--seed", "3"}).status, 0);
  std::string disk = slurp(path("t.img"));
  const uint64_t chunk2_lba = f::kFirstSessionLba + f::sectors_before_chunks(2) + 2 * f::kChunkSectors;
  disk[chunk2_lba * f::kSectorSize + sizeof(f::ChunkHeader) + 100] ^= 0x01;
  write_bytes(path("c.img"), disk);
  const uint64_t first = 2 * f::kRecordsPerChunk;
  const uint64_t last = 3 * f::kRecordsPerChunk - 1;
  const std::string lost = fmt::format("lost seqs {}-{} ({} events)", first, last, f::kRecordsPerChunk);

  const EttRun refused = ett({"extract", path("c.img"), "-o", path("x.csv")});
  EXPECT_EQ(refused.status, 12) << refused.err;
  EXPECT_FALSE(fs::exists(path("x.csv")));
  const EttRun salvaged = ett({"extract", path("c.img"), "--salvage", "-o", path("x.csv")});
  EXPECT_EQ(salvaged.status, 0) << salvaged.err;
  EXPECT_NE(salvaged.err.find("ett: warning:"), std::string::npos) << salvaged.err;
  EXPECT_NE(salvaged.err.find(lost), std::string::npos) << salvaged.err;
  std::istringstream csv(slurp(path("x.csv")));
  std::string line;
  std::getline(csv, line);
  std::vector<uint64_t> seqs;
  while (std::getline(csv, line)) seqs.push_back(std::stoull(line.substr(0, line.find(','))));
  ASSERT_EQ(seqs.size(), 20000 - f::kRecordsPerChunk);
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i < first ? i : i + f::kRecordsPerChunk) << i;

  const EttRun ls = ett({"ls", path("c.img"), "--json"});
  EXPECT_EQ(ls.status, 12) << ls.err;
  EXPECT_EQ(json::parse(ls.out).at(0).at("lost_seqs"), json::parse(fmt::format("[[{},{}]]", first, last)));
  EXPECT_NE(ett({"ls", path("c.img")}).out.find(lost), std::string::npos);

  EXPECT_EQ(ett({"load", path("c.img"), "--db", "sqlite:" + path("refused.db")}).status, 12);
  const EttRun load = ett({"load", path("c.img"), "--salvage", "--db", "sqlite:" + path("t.db")});
  EXPECT_EQ(load.status, 0) << load.err;
  EXPECT_NE(load.err.find(lost), std::string::npos) << load.err;
  const EttRun rows = ett({"sql", "--db", "sqlite:" + path("t.db"), "--format", "csv",
                           "SELECT trace_id, first_seq, last_seq, events FROM losses"});
  EXPECT_EQ(rows.out, fmt::format("trace_id,first_seq,last_seq,events\n1,{},{},{}\n", first, last,
                                  f::kRecordsPerChunk));
  EXPECT_EQ(
      ett({"sql", "--db", "sqlite:" + path("t.db"), "--format", "csv", "SELECT count(*) FROM events"}).out,
      fmt::format("count(*)\n{}\n", seqs.size()));
  const EttRun query = ett({"query", "--db", "sqlite:" + path("t.db"), "--format", "json", "losses"});
  EXPECT_EQ(query.status, 0) << query.err;
  EXPECT_EQ(json::parse(query.out).at(0).at("first_seq"), first);
  const EttRun intervals = ett({"analyze", "intervals", "--db", "sqlite:" + path("t.db")});
  EXPECT_EQ(intervals.status, 0) << intervals.err;
  EXPECT_NE(intervals.err.find(fmt::format("lost {} events (seqs {}-{})", f::kRecordsPerChunk, first, last)),
            std::string::npos)
      << intervals.err;
}

// A chunk whose own header is damaged cannot say which seqs it held: the range comes from its place in the
// session (chunk k holds seqs k*kRecordsPerChunk onwards), so the loss is exact all the same.
TEST_F(CliTest, SalvageDerivesTheRangeOfAChunkWithADamagedHeader) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "5000", "--seed", "4"}).status, 0);
  std::string disk = slurp(path("t.img"));
  const uint64_t chunk0_lba = f::kFirstSessionLba + f::sectors_before_chunks(2);
  for (size_t i = 0; i < sizeof(f::ChunkHeader); ++i) disk[chunk0_lba * f::kSectorSize + i] ^= 0x5a;
  write_bytes(path("c.img"), disk);
  const EttRun salvaged = ett({"extract", path("c.img"), "--salvage", "-o", path("x.csv")});
  EXPECT_EQ(salvaged.status, 0) << salvaged.err;
  EXPECT_NE(salvaged.err.find(
                fmt::format("lost seqs 0-{} ({} events)", f::kRecordsPerChunk - 1, f::kRecordsPerChunk)),
            std::string::npos)
      << salvaged.err;
  const std::string csv = slurp(path("x.csv"));
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + 5000 - f::kRecordsPerChunk);
  EXPECT_EQ(csv.substr(csv.find('\n') + 1, csv.find(',', csv.find('\n')) - csv.find('\n') - 1),
            std::to_string(f::kRecordsPerChunk));
}

// ---- one set of conventions
// --------------------------------------------------------------------------------

TEST_F(CliTest, LsFormatsAllCarryTheSameSessions) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "100"}).status, 0);
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "50"}).status, 0);
  const json array = json::parse(ett({"ls", path("t.img"), "--format", "json"}).out);
  ASSERT_EQ(array.size(), 2u);
  EXPECT_EQ(array[1].at("events"), 50);
  EXPECT_EQ(json::parse(ett({"ls", path("t.img"), "--json"}).out), array);
  const std::string lines = ett({"ls", path("t.img"), "--format", "jsonl"}).out;
  std::istringstream in(lines);
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i) EXPECT_EQ(json::parse(line), array.at(i));
  const std::string csv = ett({"ls", path("t.img"), "--format", "csv"}).out;
  EXPECT_EQ(csv.rfind("session,events,", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  ASSERT_EQ(ett({"ls", path("t.img"), "--format", "json", "-o", path("ls.json")}).status, 0);
  EXPECT_EQ(json::parse(slurp(path("ls.json"))), array);
  expect_one_line_error(ett({"ls", path("t.img"), "-o", path("ls.json")}), "already exists");
  expect_one_line_error(ett({"ls", path("t.img"), "--format", "xml"}), "--format 'xml'");
}

// `ett extract` writes a session as it decodes it, several blocks of a big one, and of a partial one the
// events of its good chunks: what the decoded events of the whole session give, byte for byte.
TEST_F(CliTest, ExtractWritesWhatTheWholeSessionHolds) {
  namespace f = ett::format;
  using namespace ett::host;
  const std::string image = path("big.img");
  ett::test::make_blank_disk(image, 64ull << 20);
  ett::test::SessionSpec complete;
  complete.records = ett::test::make_records(3 * 65'472 + 100);
  ett::test::SessionSpec partial = complete;
  partial.status = f::SessionStatus::Writing;
  partial.skip_chunk.assign(f::chunks_for(partial.records.size()), false);
  partial.skip_chunk[40] = true;
  {
    ett::test::TestDiskWriter writer(image);
    writer.append(complete);
    writer.append(partial);
  }
  auto opened = TraceImage::open(image);
  ASSERT_TRUE(opened);
  for (uint32_t session : {1u, 2u}) {
    auto data = opened->read_session(session - 1);
    ASSERT_TRUE(data);
    for (const char* format : {"csv", "json"}) {
      const std::string out = path(fmt::format("s{}.{}", session, format));
      const EttRun run =
          ett({"extract", image, "--session", std::to_string(session), "--format", format, "-o", out});
      ASSERT_EQ(run.status, 0) << run.err;
      std::FILE* expected = std::tmpfile();
      ASSERT_TRUE(write_events(data->events, *event_format_from_name(format),
                               {data->summary.header.capture_start_tsc, data->summary.header.tsc_hz},
                               expected, "expected"));
      std::string text(static_cast<size_t>(std::ftell(expected)), '\0');
      std::rewind(expected);
      ASSERT_EQ(std::fread(text.data(), 1, text.size(), expected), text.size());
      std::fclose(expected);
      EXPECT_TRUE(slurp(out) == text) << session << " " << format;
      if (session == 2) {
        EXPECT_NE(run.err.find("is partial"), std::string::npos) << run.err;
      }
    }
  }
}

// `ett extract` never holds the session whole: 3 M events take at most 40 MB more than 100 k (whole, the
// 2.9 M more events are 70 MB more).
TEST_F(CliTest, ExtractsMemoryDoesNotGrowWithTheSession) {
  if (!ett::test::kPeaksAreMeaningful) GTEST_SKIP() << "peak memory under AddressSanitizer";
  ASSERT_EQ(ett({"synth", path("small.img"), "--events", "100000"}).status, 0);
  ASSERT_EQ(ett({"synth", path("big.img"), "--events", "3000000"}).status, 0);
  const std::string binary = std::string(ETT_BIN_DIR) + "/ett";
  auto extract_kib = [&](const std::string& image) {
    const std::string out = path(image + ".csv");
    return ett::test::child_peak_rss_kib([&] {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::execl(binary.c_str(), "ett", "extract", path(image).c_str(), "-o", out.c_str(), nullptr);
      return false;
    });
  };
  const long small_kib = extract_kib("small.img"), big_kib = extract_kib("big.img");
  ASSERT_GT(small_kib, 0);
  ASSERT_GT(big_kib, 0);
  EXPECT_LT(big_kib - small_kib, 40 * 1024) << small_kib << " KiB, then " << big_kib << " KiB";
  std::ifstream csv(path("big.img.csv"));
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(csv), std::istreambuf_iterator<char>(), '\n'),
            3'000'001);
}

TEST_F(CliTest, DashMeansStandardOutputAndStandardInput) {
  load();
  const EttRun extracted = ett({"extract", path("t.img"), "-o", "-"});
  ASSERT_EQ(extracted.status, 0) << extracted.err;
  EXPECT_EQ(extracted.out.rfind("seq,probe,code", 0), 0u);
  EXPECT_FALSE(fs::exists(path("-")));
  const EttRun exported = ett({"export", "--format", "csv", "-o", "-", "--db", "sqlite:t.db"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_FALSE(fs::exists(path("-")));

  const EttRun sql = ett({"sql", "-", "--format", "json", "--db", "sqlite:t.db"},
                         "SELECT count(*) AS n, NULL AS missing, 'x' AS word FROM events;\n");
  ASSERT_EQ(sql.status, 0) << sql.err;
  const json rows = json::parse(sql.out);
  EXPECT_EQ(rows.at(0).at("n"), 2000);
  EXPECT_TRUE(rows.at(0).at("missing").is_null());
  EXPECT_EQ(rows.at(0).at("word"), "x");
  expect_one_line_error(ett({"sql", "-", "--db", "sqlite:t.db"}, ""), "no SQL given");
}

TEST_F(CliTest, QueryAndSqlSpeakEveryFormat) {
  load();
  const json traces = json::parse(ett({"query", "traces", "--format", "json", "--db", "sqlite:t.db"}).out);
  ASSERT_EQ(traces.size(), 1u);
  const EttRun lines = ett({"sql", "SELECT seq, probe FROM events ORDER BY seq LIMIT 3", "--format", "jsonl",
                            "--db", "sqlite:t.db"});
  ASSERT_EQ(lines.status, 0) << lines.err;
  std::istringstream in(lines.out);
  std::string line;
  int count = 0;
  for (; std::getline(in, line); ++count) EXPECT_TRUE(json::parse(line).at("probe").is_number());
  EXPECT_EQ(count, 3);
  const EttRun csv = ett({"query", "traces", "--format", "csv", "--db", "sqlite:t.db", "-o", path("q.csv")});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(slurp(path("q.csv")), ett({"query", "traces", "--csv", "--db", "sqlite:t.db"}).out);
  const EttRun analyzed =
      ett({"analyze", "intervals", "--format", "json", "--db", "sqlite:t.db", "-o", path("i.json")});
  ASSERT_EQ(analyzed.status, 0) << analyzed.err;
  EXPECT_TRUE(json::parse(slurp(path("i.json"))).is_object());
}

TEST_F(CliTest, HelpSuggestionsVersionCompletionAndManComeFromOneDefinition) {
  const EttRun help = ett({"help", "extract"});
  ASSERT_EQ(help.status, 0);
  EXPECT_EQ(help.out, ett({"extract", "--help"}).out);
  EXPECT_NE(help.out.find("--format"), std::string::npos);
  EXPECT_EQ(ett({"help", "analyze", "durations"}).out, ett({"analyze", "durations", "--help"}).out);
  expect_one_line_error(ett({"help", "extrat"}), "no command 'extrat'");
  expect_one_line_error(ett({"lss", "x.img"}), "did you mean 'ls'?");
  expect_one_line_error(ett({"exprot"}), "'export'");

  const EttRun version = ett({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("(git "), std::string::npos) << version.out;

  const EttRun completion = ett({"completion", "bash"});
  ASSERT_EQ(completion.status, 0);
  write_bytes(path("ett.bash"), completion.out);
  EXPECT_EQ(std::system(("bash -n " + shell_quote(path("ett.bash"))).c_str()), 0);
  // Completing "ett analyze durations --p" offers --pi-ns and --pair.
  const std::string script =
      "source " + shell_quote(path("ett.bash")) +
      "; COMP_WORDS=(ett analyze durations --p); COMP_CWORD=3; _ett; echo \"${COMPREPLY[*]}\"";
  write_bytes(path("complete.sh"), script);
  std::FILE* pipe = ::popen(("bash " + shell_quote(path("complete.sh"))).c_str(), "r");
  std::array<char, 4096> buffer{};
  const size_t got = std::fread(buffer.data(), 1, buffer.size() - 1, pipe);
  ::pclose(pipe);
  const std::string offered(buffer.data(), got);
  EXPECT_NE(offered.find("--pi-ns"), std::string::npos) << offered;
  EXPECT_NE(offered.find("--pair"), std::string::npos) << offered;
  // "ett fidelity --se": the fidelity verb's own options.
  write_bytes(path("complete-fidelity.sh"),
              "source " + shell_quote(path("ett.bash")) +
                  "; COMP_WORDS=(ett fidelity --se); COMP_CWORD=2; _ett; echo \"${COMPREPLY[*]}\"");
  pipe = ::popen(("bash " + shell_quote(path("complete-fidelity.sh"))).c_str(), "r");
  const std::string fidelity_offered(buffer.data(), std::fread(buffer.data(), 1, buffer.size() - 1, pipe));
  ::pclose(pipe);
  EXPECT_NE(fidelity_offered.find("--sent-log"), std::string::npos) << fidelity_offered;
  EXPECT_NE(fidelity_offered.find("--session"), std::string::npos) << fidelity_offered;

  // ett(1) lists the verbs, each verb's page (ett-VERB(1)) its options (tests/cli/man_pages_test.cpp).
  const EttRun man = ett({"man"});
  ASSERT_EQ(man.status, 0);
  EXPECT_EQ(man.out.rfind(".TH ETT 1", 0), 0u);
  for (const char* verb : {"ls", "extract", "qemu", "signal", "load", "query", "sql", "analyze", "export",
                           "report", "label", "synth", "mkdisk", "fidelity"})
    EXPECT_NE(man.out.find(std::string("ett\\-") + verb + "(1)"), std::string::npos) << verb;
  EXPECT_NE(ett({"man", "analyze"}).out.find(".SS \"ett analyze durations\""), std::string::npos);
  const std::string fidelity = ett({"man", "fidelity"}).out;
  for (const char* option : {"sent\\-log", "machines", "tolerance", "format", "force"})
    EXPECT_NE(fidelity.find(std::string("\\fB\\-\\-") + option), std::string::npos) << option;
  EXPECT_NE(ett({"man", "qemu"}).out.find("\\fB\\-\\-fidelity\\-format"), std::string::npos);
}

TEST_F(CliTest, QuietLeavesOnlyResultsAndErrors) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "100"}).status, 0);
  const EttRun loud = ett({"extract", path("t.img"), "-o", path("a.csv")});
  EXPECT_NE(loud.err.find("wrote 100 events"), std::string::npos) << loud.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-q", "extract", path("t.img"), "-o", path("b.csv")},
        std::vector<std::string>{"extract", path("t.img"), "-o", path("c.csv"), "--quiet"}}) {
    const EttRun quiet = ett(args);
    EXPECT_EQ(quiet.status, 0);
    EXPECT_TRUE(quiet.err.empty()) << quiet.err;
  }
  EXPECT_EQ(slurp(path("b.csv")), slurp(path("a.csv")));
}

// The analyses' JSON, parsed: what is not known (no precision stored, nothing paired) is null, never 0.
TEST_F(CliTest, AnalysisJsonSaysNullForWhatIsNotKnown) {
  load();  // a synthetic capture: no precision is stored for its machine
  auto analyze = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "analyze");
    args.insert(args.end(), {"--format", "json", "--db", "sqlite:t.db"});
    const EttRun run = ett(args);
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << "one document, one line";
    return json::parse(run.out);
  };
  const json durations = analyze({"durations", "--from", "1", "--to", "2"});
  EXPECT_TRUE(durations.at("pi_ns").is_null());
  EXPECT_TRUE(durations.at("pi_from_trace").is_null());
  EXPECT_TRUE(durations.at("bound_holds").is_null());
  ASSERT_FALSE(durations.at("actions").empty());
  EXPECT_TRUE(durations.at("actions").at(0).at("bound_ns").is_null());
  EXPECT_EQ(durations.at("durations").at("count"), durations.at("actions").size());
  EXPECT_GE(durations.at("durations").at("mean_ns").get<double>(), 0);

  const json bounded = analyze({"durations", "--from", "1", "--to", "2", "--pi-ns", "250"});
  EXPECT_EQ(bounded.at("pi_ns"), 250.0);
  EXPECT_EQ(bounded.at("bound_holds"),
            bounded.at("actions").size() - bounded.at("stalled_actions").get<size_t>());
  EXPECT_GE(bounded.at("actions").at(0).at("bound_ns").get<double>(), 250.0);

  // Nothing pairs: the count is 0 and the statistics of no durations are unknown.
  const json none = analyze({"durations", "--from", "1:0", "--to", "2:0"});
  EXPECT_EQ(none.at("durations").at("count"), 0);
  for (const char* key : {"mean_ns", "stddev_ns", "min_ns", "p50_ns", "p99_ns", "max_ns"})
    EXPECT_TRUE(none.at("durations").at(key).is_null()) << key;

  // No tau: nothing was checked, so the list of close events is null, not empty.
  const json intervals = analyze({"intervals"});
  EXPECT_TRUE(intervals.at("tau_ns").is_null());
  ASSERT_FALSE(intervals.at("probes").empty());
  for (const json& probe : intervals.at("probes")) EXPECT_TRUE(probe.at("closer_than_tau").is_null());
  const json checked = analyze({"intervals", "--tau-ns", "1"});
  EXPECT_EQ(checked.at("tau_ns"), 1.0);
  EXPECT_TRUE(checked.at("probes").at(0).at("closer_than_tau").is_array());

  const json nothing = analyze({"histogram", "--match", "XXXXXXXX", "--by", "time:1ms"});
  EXPECT_EQ(nothing.at("matched"), 2000);
  EXPECT_EQ(nothing.at("bucket_ns"), 1e6);
  EXPECT_TRUE(analyze({"histogram", "--by", "probe"}).at("match").is_null());
}

// The hint of a durations or intervals run without a stored precision names steps that store one: a
// mode=calibrate capture of the same CPU (here written as the kernel dumps one), `ett load` into the same
// database, `ett analyze precision --trace ID`; after them the same commands quote the bound. The estimate
// `ett analyze precision` makes of an ordinary capture is never stored, so the hint must not stop there.
TEST_F(CliTest, TheNoPrecisionHintNamesStepsThatStoreOne) {
  load();  // trace 1: `ett synth` traffic (CPU "ett synth"); nothing stored for its CPU
  const std::string db = "sqlite:" + path("t.db");
  const std::vector<std::string> durations = {"analyze", "durations", "--trace", "1",    "--from",
                                              "1",       "--to",      "2",       "--db", db};
  const EttRun unknown = ett(durations);
  ASSERT_EQ(unknown.status, 0) << unknown.err;
  const std::string steps =
      "capture once with the kernel argument mode=calibrate on this PC (under QEMU: `ett qemu run ... "
      "--append "
      "mode=calibrate`), `ett load` that disk into this database, then run `ett analyze precision --trace "
      "ID` "
      "on that trace: it stores the bound for every trace of the same CPU";
  EXPECT_NE(unknown.out.find("error bound unknown: no precision stored for this CPU and no --pi-ns"),
            std::string::npos)
      << unknown.out;
  EXPECT_NE(unknown.out.find("to know it: give --pi-ns NS, or " + steps), std::string::npos) << unknown.out;
  const EttRun unchecked = ett({"analyze", "intervals", "--trace", "1", "--db", db});
  ASSERT_EQ(unchecked.status, 0) << unchecked.err;
  EXPECT_NE(unchecked.out.find("to check them: give --tau-ns NS, or " + steps), std::string::npos)
      << unchecked.out;

  // Step 1: a mode=calibrate capture on the same PC: every loop step a record (probe 0, aux = the step in
  // ticks), 200 ns steps at 3 GHz and one of 1500 ns.
  std::vector<f::EventRecord> loop;
  uint64_t tsc = 2'000'000;
  for (uint32_t i = 0; i <= 1000; ++i) {
    const uint32_t step = i == 0 ? 0 : i == 500 ? 4'500 : 600;
    tsc += step;
    loop.push_back({tsc, 0, 0, 0, 0, step});
  }
  {
    auto writer = host::SessionWriter::open(path("t.img"));
    ASSERT_TRUE(writer) << writer.error().message;
    host::SessionSpec calibrate;
    calibrate.records = loop;
    calibrate.mode = f::CaptureMode::Calibrate;
    calibrate.cpu_vendor = "GenuineIntel";  // `ett synth`'s CPU
    calibrate.cpu_brand = "ett synth";
    ASSERT_TRUE(writer->append(calibrate)) << "appending the calibrate session";
  }
  // Step 2: `ett load` it into this database (the newest session: trace 2).
  const EttRun loaded = ett({"load", path("t.img"), "--db", db});
  ASSERT_EQ(loaded.status, 0) << loaded.err;
  // Step 3: `ett analyze precision --trace ID` stores it, and says so.
  const EttRun precision = ett({"analyze", "precision", "--trace", "2", "--db", db});
  ASSERT_EQ(precision.status, 0) << precision.err;
  EXPECT_NE(precision.out.find("stored: `ett analyze durations`, `ett analyze intervals` and `ett report` "
                               "quote it for every trace of this CPU (ett synth) in this database"),
            std::string::npos)
      << precision.out;

  // The bound is known now: pi(100 %) = the longest step + epsilon = 1500 + 1/3 ns, measured on trace 2.
  const EttRun known = ett(durations);
  ASSERT_EQ(known.status, 0) << known.err;
  EXPECT_EQ(known.out.find("error bound unknown"), std::string::npos) << known.out;
  EXPECT_NE(known.out.find("(pi of this CPU, measured on trace 2)"), std::string::npos) << known.out;
  EXPECT_NE(known.out.find("±1500.3 ns"), std::string::npos) << known.out;
  const EttRun checked = ett({"analyze", "intervals", "--trace", "1", "--db", db});
  ASSERT_EQ(checked.status, 0) << checked.err;
  EXPECT_NE(checked.out.find("the 100 % tau of this CPU, measured on trace 2"), std::string::npos)
      << checked.out;
}

TEST_F(CliTest, ExtractSpeaksEveryFormat) {
  ASSERT_EQ(ett({"synth", path("t.img"), "--events", "300", "--seed", "4"}).status, 0);
  const EttRun jsonl = ett({"extract", path("t.img"), "--format", "jsonl"});
  ASSERT_EQ(jsonl.status, 0) << jsonl.err;
  const EttRun array = ett({"extract", path("t.img"), "--format", "json", "-o", path("e.json")});
  ASSERT_EQ(array.status, 0) << array.err;
  const json events = json::parse(slurp(path("e.json")));
  ASSERT_EQ(events.size(), 300u);
  std::istringstream lines(jsonl.out);
  std::string line;
  size_t i = 0;
  for (; std::getline(lines, line); ++i) EXPECT_EQ(json::parse(line), events.at(i));
  EXPECT_EQ(i, 300u);
  const EttRun text = ett({"extract", path("t.img"), "--format", "text", "-o", "-"});
  ASSERT_EQ(text.status, 0) << text.err;
  std::istringstream rows(text.out);
  std::getline(rows, line);
  EXPECT_NE(line.find("time_ns"), std::string::npos) << line;
  std::getline(rows, line);
  std::istringstream first(line);
  int64_t seq = -1, probe = -1, code = -1, tsc = -1, time_ns = -1, lines_value = -1;
  first >> seq >> probe >> code >> tsc >> time_ns >> lines_value;
  EXPECT_EQ(seq, events.at(0).at("seq"));
  EXPECT_EQ(tsc, events.at(0).at("tsc"));
  EXPECT_EQ(time_ns, events.at(0).at("time_ns"));
  EXPECT_EQ(lines_value, events.at(0).at("lines"));
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), 301);
  EXPECT_EQ(ett({"extract", path("t.img")}).out.rfind("seq,probe,code,tsc,time_ns\n", 0), 0u)
      << "csv stays the default";
  expect_one_line_error(ett({"extract", path("t.img"), "--format", "xml"}), "--format 'xml'");
  expect_one_line_error(ett({"extract", path("t.img"), "--format", "json", "-o", path("e.json")}),
                        "already exists");
  EXPECT_EQ(json::parse(slurp(path("e.json"))).size(), 300u) << "not overwritten";
}

// Progress on standard error: drawn only on a terminal and without -q, erased before anything else is
// printed, and erased on Ctrl-C, which leaves nothing half-done behind.
TEST_F(CliTest, ProgressIsForTerminalsAndCtrlCCleansUp) {
  const auto npos = std::string::npos;
  // synth draws its line as load does (a bar while the events are made, then the writing and its seconds),
  // erased before its result line. The line is drawn from 0.3 s on: a synth done sooner (an idle machine
  // writes these 3 M events in about 0.3 s) has none, a slower one must have one.
  const auto synth_start = std::chrono::steady_clock::now();
  const TerminalRun synth = ett_on_terminal({"synth", path("big.img"), "--events", "3000000", "--seed", "2"});
  const double synth_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - synth_start).count();
  ASSERT_EQ(synth.status, 0) << synth.screen;
  const size_t made = synth.screen.find("3000000 synthetic events");
  ASSERT_NE(made, npos) << synth.screen;
  const size_t synth_bar = synth.screen.rfind("ett synth: ", made);
  if (synth_seconds >= 2.0) {
    EXPECT_NE(synth_bar, npos) << "no progress on the terminal: " << synth.screen;
  }
  if (synth_bar != npos) {
    EXPECT_LT(synth.screen.find("\r\033[K", synth_bar), made) << synth.screen.substr(synth_bar);
  }

  const TerminalRun full = ett_on_terminal({"load", path("big.img"), "--db", "sqlite:f.db"});
  ASSERT_EQ(full.status, 0) << full.screen;
  const size_t result = full.screen.find("loaded as trace 1");
  ASSERT_NE(result, npos) << full.screen;
  const size_t bar = full.screen.rfind("ett load: session", result);
  ASSERT_NE(bar, npos) << "no progress on the terminal: " << full.screen;
  EXPECT_LT(full.screen.rfind("ett load: ", result), full.screen.rfind("\r\033[K", result))
      << "the bar is erased before the result, and not drawn again: " << full.screen.substr(bar);

  // Ctrl-C during the load: the bar is erased before the message, the status is 130, and the database file
  // the load created is gone.
  const TerminalRun load =
      ett_on_terminal({"load", path("big.img"), "--db", "sqlite:i.db"}, "ett load: session");
  ASSERT_TRUE(load.interrupted) << load.screen;
  EXPECT_EQ(load.status, 130) << load.screen;
  const size_t message = load.screen.find("ett: load abandoned");
  ASSERT_NE(message, npos) << load.screen;
  const size_t last_bar = load.screen.rfind("ett load: ", message);
  ASSERT_NE(last_bar, npos);
  EXPECT_LT(load.screen.find("\r\033[K", last_bar), message) << load.screen.substr(last_bar);
  EXPECT_FALSE(fs::exists(path("i.db")));
  EXPECT_FALSE(fs::exists(path("i.db-journal")));

  // Ctrl-C while export waits for the database (another connection holds it locked): the run ends at once
  // and the output file it had created is removed.
  {
    auto db = host::open_database("sqlite:" + path("f.db"));
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE((*db)->run_script("BEGIN EXCLUSIVE"));
    const TerminalRun exported = ett_on_terminal(
        {"export", "--format", "csv", "-o", path("x.csv"), "--db", "sqlite:f.db"}, "ett export: reading");
    ASSERT_TRUE(exported.interrupted) << exported.screen;
    EXPECT_EQ(exported.status, 130) << exported.screen;
    EXPECT_FALSE(fs::exists(path("x.csv")));
    const size_t export_bar = exported.screen.rfind("ett export: ");
    EXPECT_NE(exported.screen.find("\r\033[K", export_bar), npos) << "the last bar is erased";
  }

  // The default VCD opens in sigrok as it is (its codes are bit wires, not vectors): written on a terminal,
  // no note sends anyone to --no-bus.
  {
    const TerminalRun vcd =
        ett_on_terminal({"export", "--format", "vcd", "-o", path("bus.vcd"), "--db", "sqlite:f.db"});
    EXPECT_EQ(vcd.status, 0) << vcd.screen;
    EXPECT_EQ(vcd.screen.find("--no-bus"), npos) << vcd.screen;
    EXPECT_EQ(vcd.screen.find("sigrok"), npos) << vcd.screen;
  }

  // -q: no progress; not a terminal: no progress either.
  const TerminalRun quiet = ett_on_terminal({"-q", "extract", path("big.img"), "-o", "/dev/null", "--force"});
  EXPECT_EQ(quiet.status, 0) << quiet.screen;
  EXPECT_EQ(quiet.screen.find("ett extract:"), npos) << quiet.screen;
  const EttRun piped = ett({"extract", path("big.img"), "-o", "/dev/null", "--force"});
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.err.find('\r'), npos) << piped.err;
}

// The guide's table of verbs (docs/guide/ett-command.md, "The verbs") names every verb `ett help` lists, with
// every option `ett help VERB` lists.
TEST_F(CliTest, GuideVerbTableMatchesHelp) {
  const std::string guide = slurp(std::string(ETT_SOURCE_DIR) + "/docs/guide/ett-command.md");
  const size_t start = guide.find("## The verbs");
  ASSERT_NE(start, std::string::npos);
  const std::string section = guide.substr(start, guide.find("\n## ", start + 1) - start);
  // Every verb's page (ett(1) lists them): a verb's OPTIONS, under a heading per subverb.
  std::string man;
  std::istringstream commands(ett({"man"}).out);
  bool listing = false;
  for (std::string line, previous; std::getline(commands, line); previous = line) {
    if (line.rfind(".SH ", 0) == 0) listing = line == ".SH COMMANDS";
    if (!listing || previous != ".TP") continue;
    const std::string verb = line.substr(3, line.find("\\fR") - 3);
    const std::string page = ett({"man", verb}).out;
    const size_t options = page.find(".SH OPTIONS");
    if (page.find(".SS \"", options) == std::string::npos) man += ".SS \"ett " + verb + "\"\n";
    man += page.substr(options, page.find(".SH EXIT STATUS") - options);
  }
  std::istringstream in(man);
  std::string line, verb;
  int verbs = 0;
  while (std::getline(in, line)) {
    if (line.rfind(".SS \"", 0) == 0) {
      verb = line.substr(5, line.size() - 6);
      ++verbs;
      // "ett analyze durations": the row of `ett analyze` names durations.
      std::istringstream words(verb.substr(4));
      std::string first, rest;
      words >> first;
      EXPECT_NE(section.find("`ett " + first), std::string::npos)
          << verb << " is not in the guide's table of verbs";
      while (words >> rest)
        EXPECT_NE(section.find(rest), std::string::npos) << verb << " is not in the guide";
    } else if (!verb.empty() && line.rfind("\\fB\\-\\-", 0) == 0) {
      std::string option = line.substr(3, line.find("\\fR") - 3);
      for (size_t at; (at = option.find("\\-")) != std::string::npos;) option.replace(at, 2, "-");
      if (option == "--help") continue;
      EXPECT_NE(section.find(option), std::string::npos) << verb << " " << option << " is not in the guide";
    }
  }
  EXPECT_GE(verbs, 15);
}

}  // namespace
}  // namespace ett::test
