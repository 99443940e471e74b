// bounded_input_test.cpp: inputs that once filled memory, crashed or ran for minutes (/dev/zero as a
// scenario, SQL, sent log or .run.json; a huge --events, --resamples or --max-buckets; a tiny --sync-period;
// a serial log naming a far sector; a wrong stored event count) end at once with one `ett:` line or the right
// result, under a 2 GB address-space limit and a one-minute timeout, leaving nothing behind.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ett/serial_framing.h"
#include "support/child_peak.h"
#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

namespace fs = std::filesystem;

class BoundedInputTest : public ::testing::Test {
 protected:
  // `ett ARGS` in the scratch directory with `stdin_path` on its standard input, under RLIMIT_AS 2 GB (not
  // under AddressSanitizer, whose shadow memory alone is larger) and `timeout 60`: a runaway read or
  // allocation fails the status check instead of reaching the machine's out-of-memory killer.
  EttRun ett_limited(const std::vector<std::string>& args, const std::string& stdin_path = "/dev/null",
                     uint64_t limit_kib = 2097152) {
    const std::string dir = m_dir.file(""), err_path = m_dir.file("stderr");
    std::string command = "cd " + shell_quote(dir) + " && ";
    if (kPeaksAreMeaningful) command += fmt::format("ulimit -v {} && ", limit_kib);
    command += "ETT_DB= timeout 60 " + shell_quote(std::string(ETT_BIN_DIR) + "/ett");
    for (const std::string& arg : args) command += " " + shell_quote(arg);
    return run_command(command + " <" + shell_quote(stdin_path) + " 2>" + shell_quote(err_path), err_path);
  }

  std::string path(const std::string& name) const { return m_dir.file(name); }

  // The files of the scratch directory, but for the test's own stderr file and those named in `known`.
  std::vector<std::string> other_files(const std::vector<std::string>& known = {}) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(m_dir.file(""))) {
      const std::string name = entry.path().filename().string();
      if (name != "stderr" && std::find(known.begin(), known.end(), name) == known.end())
        names.push_back(name);
    }
    return names;
  }

  static void expect_usage_error(const EttRun& run, int status, const std::string& words) {
    EXPECT_EQ(run.status, status) << run.err;
    EXPECT_EQ(run.err.rfind("ett: ", 0), 0u) << run.err;
    EXPECT_EQ(run.err_lines(), 1) << run.err;
    EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
  }

  TempDir m_dir;
};

TEST_F(BoundedInputTest, ScenarioFromDevZeroOrWithAHugeLineIsRefused) {
  write_bytes(path("kernel.elf"), "not used: the scenario is read first");
  expect_usage_error(
      ett_limited({"qemu", "run", "--disk", "t.img", "--scenario", "/dev/zero", "--kernel", "kernel.elf"}), 1,
      "/dev/zero: a NUL byte at offset 0: not a text file");
  write_bytes(path("long.scn"), "0 1 1\n" + std::string(70'000, '1') + "\n");
  expect_usage_error(
      ett_limited({"qemu", "run", "--disk", "t.img", "--scenario", "long.scn", "--kernel", "kernel.elf"}), 1,
      "long.scn:2: a line longer than 65536 bytes");
  EXPECT_EQ(other_files({"kernel.elf", "long.scn"}), std::vector<std::string>{});
}

TEST_F(BoundedInputTest, SyncEdgesAreBoundedBeforeQemuStarts) {
  // 1000 s of scenario: 0.01 us between edges would make 1e11 of them; below 1 ns the period is 0.
  write_bytes(path("kernel.elf"), "not used: the edges are counted first");
  write_bytes(path("s.scn"), "0 1 1\n1000000000 1 2\n");
  const std::vector<std::string> run = {"qemu",       "run",   "--disk",       "t.img",
                                        "--scenario", "s.scn", "--kernel",     "kernel.elf",
                                        "--machines", "2",     "--sync-probe", "2"};
  auto with_period = [&](const std::string& period) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--sync-period", period});
    return ett_limited(args);
  };
  expect_usage_error(
      with_period("0.01"), 1,
      "--sync-period 0.01 us over the scenario's 1000 s makes 100000000001 sync edges; at most "
      "10000000");
  expect_usage_error(with_period("0.0001"), 1, "--sync-period: at least 0.001 us");
  EXPECT_EQ(other_files({"kernel.elf", "s.scn"}), std::vector<std::string>{});
}

TEST_F(BoundedInputTest, SqlFromStandardInputIsBoundedAndText) {
  expect_usage_error(ett_limited({"sql", "-", "--db", "sqlite:x.db"}, "/dev/zero"), 1,
                     "standard input (the SQL): a NUL byte at offset 0");
  // 16 MiB of SQL at most: a few bytes more is refused with the limit named.
  std::string big;
  while (big.size() <= (size_t{16} << 20)) big += "SELECT 1;\n";
  write_bytes(path("big.sql"), big);
  expect_usage_error(ett_limited({"sql", "-", "--db", "sqlite:x.db"}, path("big.sql")), 1,
                     "larger than 16.8 MB, the most the SQL may hold");
}

TEST_F(BoundedInputTest, SentLogAndItsRunDescriptionFromDevZeroAreRefused) {
  ASSERT_EQ(ett_limited({"synth", "t.img", "--events", "200", "--seed", "7"}).status, 0);
  expect_usage_error(ett_limited({"fidelity", "t.img", "--sent-log", "/dev/zero"}), 1,
                     "/dev/zero:1: a NUL byte: not a text file");
  // A sent log whose .run.json beside it is /dev/zero.
  write_bytes(path("sent.csv"),
              "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,"
              "guest_tsc_before,held_back\n");
  fs::create_symlink("/dev/zero", path("sent.run.json"));
  expect_usage_error(ett_limited({"fidelity", "t.img", "--sent-log", "sent.csv"}), 1,
                     "sent.run.json: a NUL byte at offset 0: not a text file");
}

TEST_F(BoundedInputTest, SynthRefusesWhatWouldNotFitBeforeWritingAnything) {
  // Without the limit a machine with more than 128 GB would make the 64 GB of events.
  if (!kPeaksAreMeaningful)
    GTEST_SKIP() << "needs the address-space limit, which AddressSanitizer cannot run under";
  const EttRun run = ett_limited({"synth", "big.img", "--events", "4000000000"});
  expect_usage_error(run, 1, "--events 4000000000 needs 64.0 GB of memory; at most ");
  EXPECT_EQ(other_files(), std::vector<std::string>{});
}

TEST_F(BoundedInputTest, DurationsSayWhatTheirActionsNeedBeforeTheRead) {
  if (!kPeaksAreMeaningful)
    GTEST_SKIP() << "needs the address-space limit, which AddressSanitizer cannot run under";
  // 2 M events: 1 M start events on probe 1, 72 MB of actions held; under a 100 MB address-space limit at
  // most 51.2 MB may be used.
  ASSERT_EQ(ett_limited({"synth", "t.img", "--events", "2000000", "--seed", "7"}).status, 0);
  ASSERT_EQ(ett_limited({"load", "t.img", "--db", "sqlite:t.db"}).status, 0);
  const std::vector<std::string> durations = {"analyze", "durations", "--from", "1",
                                              "--to",    "2",         "--db",   "sqlite:t.db"};
  expect_usage_error(
      ett_limited(durations, "/dev/null", 100'000), 1,
      "holding every action of trace 1, from 1000000 start events of --from 1 needs 72.0 MB of "
      "memory; at most 51.2 MB may be used here");
  // Fewer starts (--from 1:3, a fifteenth of them) fit, and so does the whole under the usual limit.
  std::vector<std::string> fewer = durations;
  fewer[3] = "1:3";
  EXPECT_EQ(ett_limited(fewer, "/dev/null", 100'000).status, 0);
  EXPECT_EQ(ett_limited(durations).status, 0);
}

TEST_F(BoundedInputTest, CompareRefusesAHugeBootstrapAsAUsageError) {
  // Refused before the database is opened: exit 8 (an error), never 1 (a regression).
  expect_usage_error(ett_limited({"compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to",
                                  "2", "--resamples", "1000000000", "--db", "sqlite:x.db"}),
                     8, "--resamples 1000000000: at most 100000");
}

TEST_F(BoundedInputTest, RaisedHistogramCapIsCheckedAgainstMemory) {
  if (!kPeaksAreMeaningful)
    GTEST_SKIP() << "needs the address-space limit, which AddressSanitizer cannot run under";
  ASSERT_EQ(ett_limited({"synth", "t.img", "--events", "2000", "--seed", "7"}).status, 0);
  ASSERT_EQ(ett_limited({"load", "t.img", "--db", "sqlite:t.db"}).status, 0);
  // 2000 events over tens of ms in 1 ns buckets: tens of millions of buckets, gigabytes of rows.
  const EttRun run = ett_limited(
      {"analyze", "histogram", "--by", "time:1ns", "--max-buckets", "4294967296", "--db", "sqlite:t.db"});
  expect_usage_error(run, 1, "buckets needs ");
}

TEST_F(BoundedInputTest, AStoredEventCountBeyondMemoryOnlySizesNothing) {
  // The trace's event_count sizes the analyses' first allocations; a wrong one (100 million for 2000 events)
  // is only a hint, which does not fit under the limit: the same results, from vectors that grow as they
  // fill.
  ASSERT_EQ(ett_limited({"synth", "t.img", "--events", "2000", "--seed", "7"}).status, 0);
  ASSERT_EQ(ett_limited({"load", "t.img", "--db", "sqlite:t.db"}).status, 0);
  const std::vector<std::string> durations = {"analyze", "durations", "--from", "1",    "--to",
                                              "2",       "--format",  "json",   "--db", "sqlite:t.db"};
  const EttRun before = ett_limited(durations);
  ASSERT_EQ(before.status, 0) << before.err;
  const EttRun forged =
      ett_limited({"sql", "--write", "UPDATE traces SET event_count = 100000000", "--db", "sqlite:t.db"});
  ASSERT_EQ(forged.status, 0) << forged.err;
  const EttRun after = ett_limited(durations);
  EXPECT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
}

TEST_F(BoundedInputTest, SerialLogNamingAFarSectorIsRefusedBeforeItIsMade) {
  if (!kPeaksAreMeaningful)
    GTEST_SKIP() << "needs the address-space limit, which AddressSanitizer cannot run under";
  // One well-formed ETTX line (its CRC right) for a sector 60 GiB into the disk: the image it describes could
  // not be held in memory.
  char line[serial::kMaxLineLength + 1] = {};
  const uint8_t bytes[serial::kBytesPerLine] = {};
  const uint64_t lba = (uint64_t{60} << 30) / 512;
  const size_t length = serial::encode_line(line, lba, 0, bytes);
  write_bytes(path("serial.log"), "boot\n" + std::string(line, length));
  const EttRun run = ett_limited({"ls", "serial.log"});
  expect_usage_error(run, 1,
                     fmt::format("serial.log:2: an ETTX line for sector {} makes a 64.4 GB image", lba));
}

}  // namespace
}  // namespace ett::test
