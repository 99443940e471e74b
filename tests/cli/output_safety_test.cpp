// output_safety_test.cpp: what `ett` writes never destroys what it reads: an output that is one of the run's
// inputs is refused however it is spelled, a failed or killed write leaves the old target and no temporary
// file, and user text with control characters reaches a terminal escaped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "db/database.h"
#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

namespace fs = std::filesystem;

class OutputSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A 1 MB disk: the tests read it whole after every run.
    ASSERT_EQ(ett({"mkdisk", "t.img", "--size", "1M"}).status, 0);
    ASSERT_EQ(ett({"synth", "t.img", "--events", "2000", "--seed", "7"}).status, 0);
    const EttRun loaded = ett({"load", "t.img", "--db", "sqlite:t.db"});
    ASSERT_EQ(loaded.status, 0) << loaded.err;
  }

  EttRun ett(const std::vector<std::string>& args) { return run_ett_in(m_dir.file(""), args); }

  // `ett ARGS` with its files limited to `blocks` 512-byte blocks (RLIMIT_FSIZE) and SIGXFSZ ignored, so that
  // a write past the limit fails with EFBIG as a write to a full disk fails with ENOSPC.
  EttRun ett_with_file_limit(const std::vector<std::string>& args, int blocks) {
    const std::string dir = m_dir.file("");
    std::string command = "cd " + shell_quote(dir) + " && trap '' XFSZ && ulimit -f " +
                          std::to_string(blocks) + " && ETT_DB= exec " +
                          shell_quote(std::string(ETT_BIN_DIR) + "/ett");
    for (const std::string& arg : args) command += " " + shell_quote(arg);
    const std::string err_path = dir + "/stderr";
    return run_command(command + " </dev/null 2>" + shell_quote(err_path), err_path);
  }

  std::string path(const std::string& name) const { return m_dir.file(name); }

  // The temporary files (".NAME.ett-XXXXXX") left in the scratch directory.
  std::vector<std::string> temporary_files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(m_dir.file("")))
      if (entry.path().filename().string().find(".ett-") != std::string::npos)
        names.push_back(entry.path().filename().string());
    return names;
  }

  TerminalRun ett_on_terminal(const std::vector<std::string>& args) {
    return run_ett_on_terminal(m_dir.file(""), args);
  }

  TempDir m_dir;
};

// Every verb that writes -o refuses its own trace disk or database, spelled plainly, with ./, absolute,
// through a symlink or a hard link, with --force or without; the input stays byte for byte what it was.
TEST_F(OutputSafetyTest, AnOutputThatIsAnInputIsRefusedHoweverItIsSpelled) {
  fs::create_symlink("t.img", path("link.img"));
  fs::create_hard_link(path("t.img"), path("hard.img"));
  fs::create_symlink("t.db", path("link.db"));
  const std::string image = slurp(path("t.img")), database = slurp(path("t.db"));

  struct Case {
    std::vector<std::string> verb;
    std::vector<std::string> spellings;
    int status;
  };
  const std::vector<std::string> images = {"t.img", "./t.img", path("t.img"), "link.img", "hard.img"};
  const std::vector<std::string> databases = {"t.db",    "./t.db",       path("t.db"),
                                              "link.db", "t.db-journal", "t.db-wal"};
  const std::vector<Case> cases = {
      {{"extract", "t.img"}, images, 1},
      {{"ls", "t.img"}, images, 1},
      {{"export", "--format", "csv", "--db", "sqlite:t.db"}, databases, 1},
      {{"sql", "SELECT 1", "--db", "sqlite:t.db"}, databases, 1},
      {{"sql", "--write", "SELECT 1", "--db", "sqlite:t.db"}, databases, 1},
      {{"query", "probes", "--db", "sqlite:t.db"}, databases, 1},
      {{"report", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "precision", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "durations", "--from", "1", "--to", "2", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "intervals", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "histogram", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "align", "--traces", "1,2", "--sync", "1", "--db", "sqlite:t.db"}, databases, 1},
      {{"analyze", "pps", "--line", "D0", "--db", "sqlite:t.db"}, databases, 1},
      {{"compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2", "--db", "sqlite:t.db"},
       databases,
       8},
  };
  int runs = 0;
  for (const Case& c : cases)
    for (const std::string& spelling : c.spellings)
      for (const bool force : {false, true}) {
        std::vector<std::string> args = c.verb;
        args.insert(args.end(), {"-o", spelling});
        if (force) args.push_back("--force");
        const EttRun run = ett(args);
        std::string line = c.verb[0] + " -o " + spelling + (force ? " --force" : "");
        EXPECT_EQ(run.status, c.status) << line << ": " << run.err;
        EXPECT_EQ(run.err_lines(), 1) << line << ": " << run.err;
        EXPECT_EQ(run.err.rfind("ett: -o " + spelling + " is ", 0), 0u) << line << ": " << run.err;
        EXPECT_NE(run.err.find("even with --force"), std::string::npos) << line << ": " << run.err;
        ASSERT_EQ(slurp(path("t.img")), image) << line;
        ASSERT_EQ(slurp(path("t.db")), database) << line;
        ++runs;
      }
  EXPECT_EQ(runs, 2 * (2 * 5 + 12 * 6));
  EXPECT_FALSE(fs::exists(path("t.db-journal")));
  EXPECT_FALSE(fs::exists(path("t.db-wal")));
  EXPECT_TRUE(temporary_files().empty());
}

// The files `ett qemu run` and `ett fidelity` write are refused on their trace disk, scenario or sent log
// before anything starts (QEMU is never launched), with --force too.
TEST_F(OutputSafetyTest, QemuRunAndFidelityRefuseAnOutputOnTheirInputs) {
  fs::create_symlink("t.img", path("link.img"));
  write_bytes(path("s.txt"), "1 0x10\n");
  write_bytes(path("sent.csv"), "seq\n");
  const std::string image = slurp(path("t.img"));
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"./s.txt", "the scenario"}, {"link.img", "the trace disk"}, {path("t.img"), "the trace disk"}};
  for (const char* option : {"--fidelity-out", "--fidelity-json", "--sent-log", "--serial-log"})
    for (const auto& [target, role] : targets) {
      const EttRun run =
          ett({"qemu", "run", "--disk", "t.img", "--scenario", "s.txt", option, target, "--force"});
      const std::string line = std::string(option) + " " + target;
      EXPECT_EQ(run.status, 1) << line << ": " << run.err;
      EXPECT_EQ(run.err_lines(), 1) << line << ": " << run.err;
      EXPECT_EQ(run.err.rfind("ett: " + line + " is " + role, 0), 0u) << run.err;
    }
  for (const auto& [target, role] : std::vector<std::pair<std::string, std::string>>{
           {"./sent.csv", "the sent log"}, {"link.img", "the trace disk"}}) {
    const EttRun run = ett({"fidelity", "t.img", "--sent-log", "sent.csv", "-o", target, "--force"});
    EXPECT_EQ(run.status, 1) << target << ": " << run.err;
    EXPECT_EQ(run.err.rfind("ett: -o " + target + " is " + role, 0), 0u) << run.err;
  }
  EXPECT_EQ(slurp(path("t.img")), image);
  EXPECT_EQ(slurp(path("s.txt")), "1 0x10\n");
  EXPECT_EQ(slurp(path("sent.csv")), "seq\n");
  EXPECT_TRUE(temporary_files().empty());
}

// A write that fails midway (the file size limit, as a full disk) leaves the file that was there before as
// it was, and no temporary file; without one before, it leaves no file at all (no 0-byte file to block a
// rerun).
TEST_F(OutputSafetyTest, AFailedWriteLeavesTheOldTargetAndNoTemporaryFile) {
  const std::vector<std::vector<std::string>> verbs = {
      {"export", "--format", "csv", "--db", "sqlite:t.db"},
      {"export", "--format", "perfetto", "--db", "sqlite:t.db"},
      {"sql", "SELECT * FROM events", "--db", "sqlite:t.db"},
      {"extract", "t.img"},
  };
  for (const auto& verb : verbs) {
    for (const bool existed : {false, true}) {
      fs::remove(path("out"));
      if (existed) write_bytes(path("out"), "old\n");
      std::vector<std::string> args = verb;
      args.insert(args.end(), {"-o", "out", "--force"});
      const EttRun run = ett_with_file_limit(args, 4);
      const std::string line = verb[0] + " " + verb[1] + (existed ? " over an old file" : "");
      EXPECT_NE(run.status, 0) << line;
      EXPECT_EQ(run.err_lines(), 1) << line << ": " << run.err;
      EXPECT_EQ(run.err.rfind("ett: out: ", 0), 0u) << line << ": " << run.err;
      if (existed) {
        EXPECT_EQ(slurp(path("out")), "old\n") << line;
      } else {
        EXPECT_FALSE(fs::exists(path("out"))) << line;
      }
      EXPECT_TRUE(temporary_files().empty()) << line << ": " << temporary_files().front();
    }
  }
  // The same writes without the limit succeed: the failures above were the limit's.
  const EttRun whole = ett({"export", "--format", "csv", "--db", "sqlite:t.db", "-o", "out", "--force"});
  EXPECT_EQ(whole.status, 0) << whole.err;
  EXPECT_GT(fs::file_size(path("out")), 4u * 512);
}

// A new trace disk that cannot be written leaves no image, and the message names the disk asked for.
TEST_F(OutputSafetyTest, ASynthThatFailsLeavesNoImage) {
  const EttRun run = ett_with_file_limit({"synth", "new.img", "--events", "20000"}, 64);
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.err_lines(), 1) << run.err;
  EXPECT_EQ(run.err.rfind("ett: new.img: ", 0), 0u) << run.err;
  EXPECT_FALSE(fs::exists(path("new.img")));
  EXPECT_TRUE(temporary_files().empty());
}

// SIGTERM while export has its output open (it waits for a database another connection holds locked): the
// run ends with 143 and removes the temporary file; an older file of that name is untouched.
TEST_F(OutputSafetyTest, SigtermMidExportLeavesNoTemporaryFile) {
  write_bytes(path("x.csv"), "old\n");
  auto db = host::open_database("sqlite:" + path("t.db"));
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE((*db)->run_script("BEGIN EXCLUSIVE"));
  const std::string dir = m_dir.file(""), bin = std::string(ETT_BIN_DIR) + "/ett";
  const pid_t child = ::fork();
  if (child == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::execl(bin.c_str(), bin.c_str(), "export", "--format", "csv", "-o", "x.csv", "--force", "--db",
            "sqlite:t.db", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(child, 0);
  // Waits (up to a minute, never a sleep that decides the result) for the temporary file to appear.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (temporary_files().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(temporary_files().size(), 1u);
  ::kill(child, SIGTERM);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_TRUE(temporary_files().empty());
  EXPECT_EQ(slurp(path("x.csv")), "old\n");
}

// A label or disk name holding ESC and an OSC title sequence reaches text output escaped (\xHH), in every
// verb that shows it there; CSV keeps the bytes as they are.
TEST_F(OutputSafetyTest, ControlCharactersInLabelsAreEscapedInText) {
  const std::string label = "evil\033]0;pwned\007x";
  const EttRun labelled = ett({"label", "--probe", "1", "--db", "sqlite:t.db", label});
  ASSERT_EQ(labelled.status, 0) << labelled.err;
  EXPECT_NE(labelled.out.find("evil\\x1b]0;pwned\\x07x"), std::string::npos) << labelled.out;
  EXPECT_EQ(labelled.out.find('\033'), std::string::npos) << labelled.out;
  const EttRun named = ett({"mkdisk", "named.img", "--size", "1M", "--name", "d\033]0;x\007"});
  ASSERT_EQ(named.status, 0) << named.err;
  EXPECT_NE(named.out.find("name \"d\\x1b]0;x\\x07\""), std::string::npos) << named.out;
  for (const std::vector<std::string>& verb :
       std::vector<std::vector<std::string>>{{"query", "probes"}, {"sql", "SELECT label FROM probes"}}) {
    std::vector<std::string> args = verb;
    args.insert(args.end(), {"--db", "sqlite:t.db"});
    const EttRun text = ett(args);
    ASSERT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("evil\\x1b]0;pwned\\x07x"), std::string::npos) << verb[0] << ": " << text.out;
    EXPECT_EQ(text.out.find('\033'), std::string::npos) << verb[0];
    EXPECT_EQ(text.out.find('\007'), std::string::npos) << verb[0];
    args.insert(args.end(), {"--format", "csv"});
    const EttRun csv = ett(args);
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_NE(csv.out.find(label), std::string::npos) << verb[0] << ": " << csv.out;
  }
}

// Binary output is never sent to a terminal by accident; -o - says it is meant.
TEST_F(OutputSafetyTest, PerfettoProtoIsRefusedOnATerminalUnlessAskedFor) {
  const TerminalRun refused =
      ett_on_terminal({"export", "--format", "perfetto-proto", "--db", "sqlite:t.db"});
  EXPECT_EQ(refused.status, 1) << refused.screen;
  EXPECT_EQ(refused.screen.rfind("ett: --format perfetto-proto is binary", 0), 0u) << refused.screen;
  const TerminalRun asked =
      ett_on_terminal({"-q", "export", "--format", "perfetto-proto", "--db", "sqlite:t.db", "-o", "-"});
  EXPECT_EQ(asked.status, 0);
  EXPECT_GT(asked.screen.size(), 2000u);
}

}  // namespace
}  // namespace ett::test
