// runner_live_test.cpp: `ett qemu run --run CMD` against the fake QEMU of qemu_runner_test.cpp: the
// command (this test binary again, with ETT_TEST_SIGNALS) signals through libettprobe while the fake kernel
// records, and the runner stops the capture when the command exits.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ettprobe.h"
#include "harness/runner.h"
#include "image/trace_image.h"
#include "support/test_disk_writer.h"

namespace ett::host {
namespace {

// ETT_TEST_SIGNALS="1:3 2:5": signal probe 1 code 3, then probe 2 code 5, on $ETT_PROBE_URL, and exit.
const bool kIsSignaller = [] {
  const char* signals = std::getenv("ETT_TEST_SIGNALS");
  if (!signals) return false;
  ett_probe* probe = ett_probe_open(std::getenv("ETT_PROBE_URL") ? std::getenv("ETT_PROBE_URL") : "");
  if (!probe) {
    std::fprintf(stderr, "signaller: %s\n", ett_probe_last_error());
    std::_Exit(1);
  }
  std::istringstream words(signals);
  int probe_number = 0, code = 0;
  char colon = 0;
  while (words >> probe_number >> colon >> code)
    if (ett_probe_signal(probe, probe_number, code) != 0) {
      std::fprintf(stderr, "signaller: %s\n", ett_probe_last_error());
      std::_Exit(1);
    }
  std::_Exit(ett_probe_close(probe) == 0 ? 0 : 1);
}();

class QemuRunLiveTest : public ::testing::Test {
 protected:
  RunOptions options(const std::string& command) {
    ::setenv("ETT_FAKE_QEMU", "ok", 1);
    RunOptions run;
    run.disk = m_dir.file("disk.img");
    run.run_command = command;
    run.kernel = "/proc/self/exe";
    run.qemu = "/proc/self/exe";
    run.sent_log = m_dir.file("sent.csv");
    run.timeout_s = 30;
    run.boot_timeout_s = 10;
    return run;
  }
  void TearDown() override { ::unsetenv("ETT_FAKE_QEMU"); }
  static std::string self() { return std::filesystem::read_symlink("/proc/self/exe").string(); }
  ett::test::TempDir m_dir;
};

TEST_F(QemuRunLiveTest, CommandSignalsAreCapturedAndLogged) {
  // The command must not be a fake QEMU itself: it is this binary, started with its own variable.
  const RunOptions run = options("env -u ETT_FAKE_QEMU ETT_TEST_SIGNALS='1:3 2:5 1:4 2:0' '" + self() + "'");
  auto report = run_qemu(run, nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->live);
  EXPECT_EQ(report->command_failure, "");
  EXPECT_EQ(report->events_sent, 4u);
  EXPECT_EQ(report->kernel_events, 4u);

  std::ifstream sent(run.sent_log);
  std::string line, rows;
  std::getline(sent, line);
  EXPECT_EQ(
      line,
      "index,probe,code,lines,scheduled_ns,sent_ns,host_tsc,host_tsc_before,guest_tsc_due,guest_tsc_before,"
      "held_back,utc_ns,pps_edge,pps_second,held_ns");
  while (std::getline(sent, line)) {  // index,probe,code,lines: the columns that do not depend on timing
    size_t end = 0;
    for (int comma = 0; comma < 4; ++comma) end = line.find(',', end) + 1;
    rows += line.substr(0, end - 1) + "\n";
  }
  EXPECT_EQ(rows, "0,1,3,3\n1,2,5,83\n2,1,4,84\n3,2,0,4\n");

  auto image = TraceImage::open(run.disk);
  ASSERT_TRUE(image.ok()) << image.error().message;
  auto data = image->read_session(image->sessions().size() - 1);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const auto* events = &data->events;
  ASSERT_EQ(events->size(), 4u);
  const int expected[4][2] = {{1, 3}, {2, 5}, {1, 4}, {2, 0}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*events)[i].probe, expected[i][0]) << i;
    EXPECT_EQ((*events)[i].code, expected[i][1]) << i;
  }
}

TEST_F(QemuRunLiveTest, FailingCommandIsReportedAfterTheDump) {
  auto report = run_qemu(options("exit 3"), nullptr);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->command_failure, "exit status 3");
  EXPECT_EQ(report->events_sent, 0u);
  EXPECT_EQ(report->session_number, 1u);  // the capture was still stopped and dumped
}

TEST_F(QemuRunLiveTest, ScenarioAndRunAreExclusive) {
  RunOptions run = options("true");
  run.scenario = m_dir.file("s.txt");
  auto report = run_qemu(run, nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().kind, ErrorKind::Usage);
  EXPECT_NE(report.error().message.find("either --scenario FILE or --run CMD"), std::string::npos);
  run.scenario.clear();
  run.run_command.clear();
  EXPECT_FALSE(run_qemu(run, nullptr).ok());
}

}  // namespace
}  // namespace ett::host
