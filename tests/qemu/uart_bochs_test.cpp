// uart_bochs_test.cpp: probe=uart-loopback on Bochs's COM2 (Bochs's own 16550A model, apart from QEMU's).
// Bochs has no monitor to write the UART's MCR from outside, so uart-selftest=1 makes the kernel step MCR
// through its fixed sequence (0x11, 0x13, 0x17, 0x1f, 0x10, loopback bit set) during the capture: under
// layout=2x4 probe 1 = D0-D3 (DCD, DSR, CTS, RI) reads 2, 6, 14, 15, then 0, which stop=zero ends on. The
// trace disk is read back with `ett extract` and the sequence checked exactly.
#include <regex>

#include "bochs_machine.h"
#include "qemu_direct.h"

namespace ett::test {
namespace {

TEST(UartBochsBoot, SelfTestLoopbackSequenceIsCapturedExactly) {
  ScratchDir dir;
  const fs::path trace = dir / "trace.img";
  make_trace_disk(trace, "64M");  // the geometry Bochs is given
  const fs::path iso =
      make_test_iso(dir / "", "probe=uart-loopback uart-selftest=1 layout=2x4 stop=zero limit=2 auto=1");
  BochsMachine bochs(dir / "", {.iso = iso, .disk = trace, .com2 = true});
  ASSERT_TRUE(bochs.wait_serial("ETT: RESULT", 180)) << bochs.serial();
  bochs.stop();
  const std::string serial = bochs.serial();
  EXPECT_TRUE(has(serial, "ETT: probe uart-loopback at I/O 0x2f8: 16550A, loopback test passed")) << serial;
  EXPECT_TRUE(has(serial, "ETT: captured 5 events (stop: zero-code)")) << serial;
  EXPECT_TRUE(has(serial, "ETT: RESULT OK")) << serial;
  auto extract = run_ett({"extract", trace.string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable table = read_csv(dir / "events.csv");
  std::vector<std::pair<int, int>> events;
  for (size_t i = 0; i < table.rows.size(); ++i)
    events.emplace_back(int(table.number(i, "probe")), int(table.number(i, "code")));
  const std::vector<std::pair<int, int>> expected = {{1, 2}, {1, 6}, {1, 14}, {1, 15}, {1, 0}};
  EXPECT_EQ(events, expected);
}

// The same sequence on QEMU's COM2: the kernel-side driver gives the same captured sequence on both machines.
TEST(UartBochsBoot, SelfTestSequenceIsTheSameOnQemu) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=uart-loopback uart-selftest=1 layout=2x4 stop=zero "
                              "limit=5",
                    .qemu_args = {"-serial", "null"}},
                   dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 33) << qemu.serial();
  EXPECT_TRUE(has(qemu.serial(), "ETT: captured 5 events (stop: zero-code)")) << qemu.serial();
  EXPECT_TRUE(has(qemu.serial(), "lines 0x00 -> 0x00")) << qemu.serial();
}

// uart-selftest=1 with another source or layout is refused by name.
TEST(UartBochsBoot, SelfTestOutsideItsSourceIsRefused) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=uart-loopback uart-selftest=1 layout=8x1",
                    .qemu_args = {"-serial", "null"}},
                   dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_TRUE(has(qemu.serial(),
                  "ETT: RESULT FAILED uart-selftest=1 is a test of probe=uart-loopback with "
                  "layout=2x4: it writes the UART's MCR itself"))
      << qemu.serial();
}

}  // namespace
}  // namespace ett::test
