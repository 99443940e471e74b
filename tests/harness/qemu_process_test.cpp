// qemu_process_test.cpp: the child-process plumbing of the QEMU runner, exercised with ordinary programs.
#include "harness/qemu_process.h"

#include <gtest/gtest.h>

#include "harness/injector.h"

namespace ett::host {
namespace {

TEST(QemuProcess, CollectsOutputAndExitStatus) {
  auto process = QemuProcess::start(
      {"/bin/sh", "-c", "echo 'ETT: boot'; echo 'ETT: RESULT OK 3'; echo oops >&2; exit 33"}, nullptr);
  ASSERT_TRUE(process.ok()) << process.error().message;
  std::optional<QemuExit> exit;
  const uint64_t until = monotonic_ns() + 5'000'000'000;
  while (!(exit = (*process)->poll()) && monotonic_ns() < until) {
  }
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->status, 33);
  EXPECT_EQ((*process)->serial(), "ETT: boot\nETT: RESULT OK 3\n");
  EXPECT_EQ((*process)->errors(), "oops\n");
  EXPECT_EQ(find_line_starting((*process)->serial(), "ETT: RESULT OK"), "ETT: RESULT OK 3");
}

TEST(QemuProcess, KillsOnRequest) {
  auto process = QemuProcess::start({"/bin/sleep", "30"}, nullptr);
  ASSERT_TRUE(process.ok());
  EXPECT_FALSE((*process)->poll());
  QemuExit exit = (*process)->kill_and_wait();
  EXPECT_FALSE(exit.exited);
  EXPECT_EQ(exit.signal, 9);
  EXPECT_EQ(exit.describe().substr(0, 16), "killed by signal");
}

TEST(QemuProcess, ReportsAMissingBinary) {
  auto process = QemuProcess::start({"/nonexistent/qemu-system-i386"}, nullptr);
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.error().kind, ErrorKind::QemuFailure);
  EXPECT_NE(process.error().message.find("No such file"), std::string::npos) << process.error().message;
}

TEST(QemuProcess, SerialLines) {
  const std::string serial = "ETT: start\r\nETT: PANIC at x\r\nlast one\r\n\r\n";
  EXPECT_EQ(find_line_starting(serial, "ETT: PANIC"), "ETT: PANIC at x");
  EXPECT_EQ(find_line_starting(serial, "ETT: RESULT"), "");
  EXPECT_EQ(last_line(serial), "last one");
  EXPECT_EQ(last_line(""), "");
  EXPECT_EQ(last_line("only"), "only");
}

}  // namespace
}  // namespace ett::host
