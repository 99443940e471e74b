// uart_probe_test.cpp: probe=uart on QEMU's COM2 (a second -serial: a 16550A at 0x2f8). QEMU cannot drive a
// UART's modem-status inputs from the host, but its loopback mode (MCR bit 4) connects the UART's outputs to
// them (DTR -> DSR, RTS -> CTS, OUT1 -> RI, OUT2 -> DCD), and the monitor's `o/b 0x2fc V` writes the MCR: so
// probe=uart-loopback captures a sequence the test writes, through the same MSR read as probe=uart. QEMU's
// loopback sets no delta bits, so the short-pulse path is covered by tests/kernel/uart_probe_test.cpp. Also:
// the console's COM1 refused by name, and a base with no UART behind it.
#include <nlohmann/json.hpp>

#include "qemu_direct.h"
#include "qemu_test_support.h"

namespace ett::test {
namespace {

const std::vector<std::string> kCom2 = {"-serial", "null"};

nlohmann::json newest_session(const fs::path& disk) {
  auto ls = run_ett({"ls", disk.string(), "--json"});
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  if (!sessions.is_array() || sessions.empty()) return nlohmann::json::object();
  return sessions.back();
}

// Every MCR value written keeps bit 4 (loopback): D0 = DCD (OUT2, 0x08), D1 = DSR (DTR, 0x01), D2 = CTS
// (RTS, 0x02), D3 = RI (OUT1, 0x04). Under layout=8x1 each input is its own probe; the last write drops all
// four at once (four events from one read, in probe order) and stop=zero ends the capture on the first.
TEST(UartProbeBoot, LoopbackSequenceThroughTheMonitorIsCapturedExactly) {
  ScratchDir dir;
  auto made = run_ett({"mkdisk", (dir / "trace.img").string(), "--size", "4M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const fs::path disk = dir / "trace.img";
  DirectQemu qemu(dir / "", disk, "probe=uart-loopback layout=8x1 stop=zero limit=30", kCom2);
  ASSERT_TRUE(qemu.wait_for_serial("ETT: capturing", 60)) << qemu.serial();
  // The loop samples the lines just after "ETT: capturing": give it that moment, so the first write is an
  // event, not the initial state.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (const char* value : {"0x11", "0x13", "0x17", "0x1f", "0x10"}) {
    ASSERT_TRUE(qemu.monitor(std::string("o/b 0x2fc ") + value));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));  // monitor to guest: p90 ~3 ms
  }
  ASSERT_EQ(qemu.wait_exit(), 33) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_NE(serial.find("ETT: probe uart-loopback at I/O 0x2f8: 16550A, loopback test passed"),
            std::string::npos)
      << serial;
  EXPECT_NE(serial.find("ETT: probe uart-loopback at I/O 0x2f8: TEST-ONLY loopback (MCR bit 4), its own "
                        "outputs drive the inputs; lines D0-D3 = DCD 0, DSR 0, CTS 0, RI 0 (MSR 0x00)"),
            std::string::npos)
      << serial;
  auto extract = run_ett({"extract", disk.string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable table = read_csv(dir / "events.csv");
  std::vector<std::pair<int, int>> events;
  for (size_t i = 0; i < table.rows.size(); ++i)
    events.emplace_back(int(table.number(i, "probe")), int(table.number(i, "code")));
  const std::vector<std::pair<int, int>> expected = {{2, 1}, {3, 1}, {4, 1}, {1, 1},
                                                     {1, 0}, {2, 0}, {3, 0}, {4, 0}};
  EXPECT_EQ(events, expected);
  const auto session = newest_session(disk);
  EXPECT_EQ(session.value("probe_source", ""), "uart-loopback");
  EXPECT_EQ(session.value("stop_reason", ""), "zero-code");
  EXPECT_EQ(session.value("initial_lines", -1), 0);
  EXPECT_EQ(session.value("probe_address", -1), 0x2f8) << session.dump();
}

// COM1 carries the kernel's console: refused by name, before any register of it is touched.
TEST(UartProbeBoot, TheConsolesPortIsRefusedByName) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=uart:0x3f8"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: RESULT FAILED the UART at I/O 0x3f8 is COM1, the kernel's serial "
                               "console: use another port"),
            std::string::npos)
      << qemu.serial();
}

// Without a second -serial there is nothing at 0x2f8 (the bus floats: 0xff).
TEST(UartProbeBoot, NoUartAtTheBaseIsRefusedByName) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=uart"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: RESULT FAILED no UART answers at I/O 0x2f8 (its interrupt enable "
                               "register read 0x0f/0x0f after 0x00/0x0f were written)"),
            std::string::npos)
      << qemu.serial();
}

}  // namespace
}  // namespace ett::test
