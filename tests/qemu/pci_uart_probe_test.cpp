// pci_uart_probe_test.cpp: probe=pci-uart on QEMU's pci-serial (1b36:0002, class 07/00 prog-if 02, a 16550A
// in I/O BAR0 wherever the firmware puts it): the kernel finds it as a generic card, and probe=uart's
// loopback capture runs through it. QEMU has no way to drive a UART's modem-status inputs from the host, so
// the test uses the loopback mode (pci-uart in loopback is not a kernel option: the test writes MCR with bit
// 4 set itself, through the monitor, before each value; the capture reads the same MSR either way).
#include <nlohmann/json.hpp>
#include <regex>

#include "qemu_direct.h"
#include "qemu_test_support.h"

namespace ett::test {
namespace {

const std::vector<std::string> kPciSerial = {"-chardev", "null,id=pciser", "-device",
                                             "pci-serial,chardev=pciser"};

TEST(PciUartProbeBoot, GenericCardFoundAndItsLoopbackSequenceCapturedExactly) {
  ScratchDir dir;
  const fs::path disk = dir / "trace.img";
  auto made = run_ett({"mkdisk", disk.string(), "--size", "4M"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  DirectQemu qemu(dir / "", disk, "probe=pci-uart layout=8x1 limit=4", kPciSerial);
  ASSERT_TRUE(qemu.wait_for_serial("ETT: capturing", 60)) << qemu.serial();
  const std::string opened = qemu.serial();
  std::smatch found;
  ASSERT_TRUE(std::regex_search(opened, found,
                                std::regex("ETT: probe pci-uart: card 1b36:0002 at PCI 00:[0-9a-f]{2}\\.0 "
                                           "\\(class 07/00, generic 16550\\), port 0 at I/O 0x([0-9a-f]{4}) "
                                           "\\(BAR0 \\+ 0x0\\)")))
      << opened;
  const unsigned base = std::stoul(found[1].str(), nullptr, 16);
  EXPECT_NE(opened.find("at I/O 0x" + found[1].str() + ": 16550A, loopback test passed"), std::string::npos)
      << opened;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Input mode keeps MCR as the firmware left it; every value written sets the loopback bit (4). The lines
  // before the first write are whatever QEMU's null chardev gives (initial_lines); each write then changes
  // D0 = DCD (OUT2, 0x08), D1 = DSR (DTR, 0x01), D2 = CTS (RTS, 0x02), D3 = RI (OUT1, 0x04), in probe order.
  const std::vector<int> writes = {0x10, 0x11, 0x13, 0x17, 0x1f, 0x10, 0x1a};
  for (const int value : writes) {
    char command[40];
    std::snprintf(command, sizeof(command), "o/b 0x%x 0x%x", base + 4, value);
    ASSERT_TRUE(qemu.monitor(command));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));  // monitor to guest: p90 ~3 ms
  }
  ASSERT_EQ(qemu.wait_exit(), 33) << qemu.serial();
  auto ls = run_ett({"ls", disk.string(), "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  const auto sessions = nlohmann::json::parse(ls.output, nullptr, false);
  ASSERT_TRUE(sessions.is_array() && !sessions.empty()) << ls.output;
  const auto session = sessions.back();
  EXPECT_EQ(session.value("probe_source", ""), "pci-uart");
  EXPECT_EQ(session.value("probe_address", -1), int(base));
  int lines = session.value("initial_lines", -1);
  ASSERT_GE(lines, 0) << session.dump();
  std::vector<std::pair<int, int>> expected;
  for (const int value : writes) {
    const int now =
        (value & 0x08 ? 1 : 0) | (value & 0x01 ? 2 : 0) | (value & 0x02 ? 4 : 0) | (value & 0x04 ? 8 : 0);
    for (int k = 0; k < 4; ++k)
      if (((lines ^ now) >> k) & 1) expected.emplace_back(k + 1, (now >> k) & 1);
    lines = now;
  }
  auto extract = run_ett({"extract", disk.string(), "-o", (dir / "events.csv").string()});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  const CsvTable table = read_csv(dir / "events.csv");
  std::vector<std::pair<int, int>> events;
  for (size_t i = 0; i < table.rows.size(); ++i)
    events.emplace_back(int(table.number(i, "probe")), int(table.number(i, "code")));
  EXPECT_EQ(events, expected);
}

// No serial card on the machine: a clear refusal.
TEST(PciUartProbeBoot, NoCardIsRefusedByName) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=pci-uart"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: RESULT FAILED probe=pci-uart: no PCI serial card found"),
            std::string::npos)
      << qemu.serial();
}

}  // namespace
}  // namespace ett::test
