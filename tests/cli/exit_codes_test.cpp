// exit_codes_test.cpp: the guide's exit-status table (docs/guide/ett-command.md) is the code's (common/exit_codes.h), and the codes no other
// test provokes are provoked here: the gate's 0/1/7/8, the signals' 130/143 (with what a killed export was
// writing removed). The trace disk's 10-15 and the usage 1 of every verb are provoked by the hostile-input
// suite (tests/hostile); qemu run's 2-6 by the QEMU boot tests (tests/qemu: failure, timeout, QEMU exit,
// --run command, --check).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "support/ett_command.h"
#include "support/test_disk_writer.h"

namespace ett::test {
namespace {

namespace fs = std::filesystem;

std::string guide_path() { return std::string(ETT_SOURCE_DIR) + "/docs/guide/ett-command.md"; }

// The rows between the exit-codes markers of the guide (docs/guide/ett-command.md): "code|verbs|meaning".
std::vector<std::string> guide_rows() {
  std::ifstream in(guide_path());
  std::vector<std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("<!-- exit-codes: begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- exit-codes: end -->") != std::string::npos) break;
    if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| status", 0) == 0 || line.rfind("| ---", 0) == 0)
      continue;
    std::vector<std::string> cells;
    std::stringstream cut(line.substr(2, line.size() - 4));
    for (std::string cell; std::getline(cut, cell, '|');) {
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      cells.push_back(cell);
    }
    rows.push_back(fmt::format("{}", fmt::join(cells, "|")));
  }
  return rows;
}

TEST(ExitCodes, GuideTableIsTheTableTheCodeUses) {
  std::vector<std::string> code_rows;
  for (const host::ExitCodeRow& row : host::exit_code_table())
    code_rows.push_back(fmt::format("{}|{}|{}", row.code, row.verbs, row.meaning));
  EXPECT_EQ(guide_rows(), code_rows) << "docs/guide/ett-command.md's table between the exit-codes markers must list "
                                         "common/exit_codes.cpp's rows";
}

TEST(ExitCodes, ManPageListsEveryCode) {
  TempDir dir;
  const EttRun man = run_ett_in(dir.file(""), {"man"});
  ASSERT_EQ(man.status, 0) << man.err;
  const size_t section = man.out.find(".SH EXIT STATUS");
  ASSERT_NE(section, std::string::npos);
  for (const host::ExitCodeRow& row : host::exit_code_table())
    EXPECT_NE(man.out.find(fmt::format("\\fB{}\\fR", row.code), section), std::string::npos) << row.code;
  EXPECT_NE(man.out.find(".SH ENVIRONMENT"), std::string::npos);
}

class GateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two captures of the same traffic (seeds differ): neither is slower beyond a wide limit.
    ASSERT_EQ(ett({"synth", "t.img", "--events", "4000", "--seed", "1"}).status, 0);
    ASSERT_EQ(ett({"synth", "t.img", "--events", "4000", "--seed", "2"}).status, 0);
    ASSERT_EQ(ett({"load", "t.img", "--all", "--db", "sqlite:t.db"}).status, 0);
  }
  EttRun ett(const std::vector<std::string>& args) { return run_ett_in(m_dir.file(""), args); }
  EttRun gate(std::vector<std::string> extra) {
    std::vector<std::string> args = {"compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2",
                                     "--db", "sqlite:t.db"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ett(args);
  }
  TempDir m_dir;
};

TEST_F(GateTest, EachDecisionAndEveryErrorHasItsOwnStatus) {
  EXPECT_EQ(gate({"--max-regression", "1000%"}).status, host::kExitOk);
  // A limit below nothing: any difference at all is a regression, or (pi floor) undecided; -1000% is refused.
  EXPECT_EQ(gate({"--min-actions", "100000000"}).status, host::kExitGateUndecided);
  EXPECT_EQ(gate({"--max-regression", "-5%"}).status, host::kExitCompareError);
  EXPECT_EQ(gate({"--no-such-flag"}).status, host::kExitCompareError);
  EXPECT_EQ(gate({"--resamples"}).status, host::kExitCompareError);
  EXPECT_EQ(ett({"compare", "--baseline", "1,1", "--candidate", "2", "--from", "1", "--to", "2", "--db",
                 "sqlite:t.db"})
                .status,
            host::kExitCompareError);
  EXPECT_EQ(ett({"compare", "--baseline", "1", "--candidate", "2", "--from", "1", "--to", "2", "--db",
                 "sqlite:missing.db"})
                .status,
            host::kExitCompareError);
}

// An export killed while it writes: 143 for SIGTERM, 130 for SIGINT, and neither its temporary file nor a
// target file is left.
class SignalTest : public ::testing::TestWithParam<int> {};

TEST_P(SignalTest, AKilledExportLeavesNothingAndSaysWhichSignal) {
  const int signal = GetParam();
  TempDir dir;
  ASSERT_EQ(run_ett_in(dir.file(""), {"synth", "t.img", "--events", "2000000", "-q"}).status, 0);
  ASSERT_EQ(run_ett_in(dir.file(""), {"load", "t.img", "--db", "sqlite:t.db", "-q"}).status, 0);
  const std::string ett = std::string(ETT_BIN_DIR) + "/ett";
  const pid_t child = ::fork();
  if (child == 0) {
    if (::chdir(dir.file("").c_str()) != 0) ::_exit(127);
    ::execl(ett.c_str(), ett.c_str(), "export", "--format", "perfetto", "--db", "sqlite:t.db", "-o", "out.json",
            "-q", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Stopped between looks, so that the export cannot finish between seeing its temporary file and the signal.
  auto temporary = [&]() -> std::string {
    for (const auto& entry : fs::directory_iterator(dir.file("")))
      if (entry.path().filename().string().rfind(".out.json.ett-", 0) == 0) return entry.path().string();
    return "";
  };
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen.empty() && std::chrono::steady_clock::now() < deadline) {
    ::kill(child, SIGSTOP);
    seen = temporary();
    if (seen.empty()) {
      ::kill(child, SIGCONT);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  ASSERT_FALSE(seen.empty()) << "the export never showed its temporary file";
  ::kill(child, signal);
  ::kill(child, SIGCONT);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), signal == SIGTERM ? host::kExitSigterm : host::kExitSigint);
  EXPECT_FALSE(fs::exists(seen)) << seen;
  EXPECT_FALSE(fs::exists(dir.file("out.json")));
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalTest, ::testing::Values(SIGTERM, SIGINT));

}  // namespace
}  // namespace ett::test
