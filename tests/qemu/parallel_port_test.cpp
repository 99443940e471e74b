// parallel_port_test.cpp: probe=lpt on QEMU's ISA parallel port, which has no ECR: the no-ECR path of the
// input switch and its check (with the direction bit clear the data register reads back what was written,
// with it set 0xFF whatever is written), the port kept as input after a capture and switched and checked
// again before the next one in the same boot, a base with no port behind it, and a PCI serial card not taken
// for a parallel port. The ECR paths are in tests/kernel/parallel_port_test.cpp.
#include <regex>

#include "qemu_direct.h"

namespace ett::test {
namespace {

constexpr const char* kCheckLine =
    "ETT: probe lpt at I/O 0x378: input, checked before the capture: wrote 0x55/0xaa, read 0x55/0xaa with "
    "the "
    "direction bit clear, 0xff/0xff set";

// The control register as QEMU's monitor reads it.
int control_register(QemuMachine& qemu) {
  const std::string text = qemu.monitor("i/b 0x37a");
  std::smatch match;
  const std::regex value("portb\\[0x037a\\] = 0x([0-9a-f]{2})");
  if (!std::regex_search(text, match, value)) return -1;
  return std::stoi(match[1].str(), nullptr, 16);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ParallelPort, QemuPortWithoutEcrSwitchesToInputAndStaysInputAfterTheCapture) {
  ScratchDir dir;
  QemuMachine qemu({.append = "auto=1 dump=none probe=lpt limit=0.1", .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage:", 90)) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(std::regex_search(
      serial,
      std::regex("ETT: probe lpt at I/O 0x378: no ECR at 0x77a \\(control was 0x[0-9a-f]{2}\\)[^\n]*\n"
                 "ETT: probe lpt at I/O 0x378: input \\(control bit 5 set\\), checked: wrote "
                 "0x55/0xaa, read 0x55/0xaa with the direction bit clear, 0xff/0xff set\n")))
      << serial;
  EXPECT_NE(serial.find(kCheckLine), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: captured 0 events (stop: deadline)"), std::string::npos) << serial;
  // After the capture, on the analysis stage, the port is still input (direction bit set): it does not drive
  // its latch against the system under test while the results are read.
  const int control = control_register(qemu);
  ASSERT_GE(control, 0);
  EXPECT_TRUE(control & 0x20) << std::hex << control;
}

// Two captures in one boot (ESC on the analysis stage, Enter on the start screen). Between them the port is
// set back to output (as a port restored after the first capture would be): the second capture must switch it
// to input and check it again, and read the lines (0xff), not the port's own latch (0xaa, the last byte the
// check wrote).
TEST(ParallelPort, SecondCaptureInTheSameBootSwitchesThePortToInputAgain) {
  ScratchDir dir;
  QemuMachine qemu({.append = "dump=none probe=lpt limit=1", .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", 90)) << qemu.serial();
  ASSERT_TRUE(qemu.start_capture()) << qemu.serial();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 0 events", 30)) << qemu.serial();
  std::string serial = qemu.serial();
  EXPECT_NE(serial.find("lines 0xff -> 0xff"), std::string::npos) << serial;
  EXPECT_EQ(count(serial, kCheckLine), 1u) << serial;
  const int control = control_register(qemu);
  ASSERT_GE(control, 0);
  EXPECT_TRUE(control & 0x20) << "input between the captures: " << std::hex << control;

  qemu.monitor("o/b 0x37a 0x0c");  // direction bit clear: the port drives its latch
  ASSERT_FALSE(control_register(qemu) & 0x20);
  const size_t mark = serial.size();
  qemu.send_key("esc");
  ASSERT_TRUE(qemu.wait_serial("ETT: start screen: press Enter", 30, mark)) << qemu.serial();
  ASSERT_TRUE(qemu.start_capture()) << qemu.serial();
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage: 0 events", 30, mark)) << qemu.serial();
  serial = qemu.serial();
  const std::string second = serial.substr(mark);
  EXPECT_NE(second.find(kCheckLine), std::string::npos) << second;
  EXPECT_NE(second.find("lines 0xff -> 0xff"), std::string::npos) << second;
  EXPECT_EQ(second.find("lines 0xaa"), std::string::npos) << second;
  EXPECT_TRUE(control_register(qemu) & 0x20);
}

TEST(ParallelPort, NoPortAtTheBaseIsRefusedByName) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=lpt:0x278"}, dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  EXPECT_NE(qemu.serial().find("ETT: RESULT FAILED no parallel port answers at I/O 0x278 (data, status and "
                               "control all read 0xff)"),
            std::string::npos)
      << qemu.serial();
}

// QEMU's PCI 16550 card (1b36:0002, class 07/00) is a serial card that is not in the card list: skipped with
// a line naming it, never taken for a parallel port.
TEST(ParallelPort, UnknownPciSerialCardIsSkippedByName) {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none probe=pci-lpt", .qemu_args = {"-device", "pci-serial"}},
                   dir / "");
  auto exit = qemu.wait_exit(60);
  ASSERT_TRUE(exit && exit->exited) << qemu.serial();
  EXPECT_EQ(exit->status, 35) << qemu.serial();
  const std::string serial = qemu.serial();
  EXPECT_TRUE(std::regex_search(serial, std::regex("ETT: pci-lpt: skipping the card 1b36:0002 at PCI "
                                                   "00:0[0-9a-f]\\.0 \\(class 07/00: not in the list of "
                                                   "serial/parallel cards\\)")))
      << serial;
  EXPECT_NE(
      serial.find("ETT: RESULT FAILED probe=pci-lpt: no PCI parallel-port card that can read its lines"),
      std::string::npos)
      << serial;
}

}  // namespace
}  // namespace ett::test
