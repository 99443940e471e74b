// parallel_port_test.cpp: probe=lpt on QEMU's ISA parallel port, which has no ECR: the no-ECR path of the
// input switch and its check (the data register then reads 0xFF whatever is written), the registers put back
// after the capture, and a base with no port behind it. The ECR paths are in
// tests/kernel/parallel_port_test.cpp.
#include <regex>

#include "qemu_direct.h"

namespace ett::test {
namespace {

TEST(ParallelPort, QemuPortWithoutEcrSwitchesToInputAndIsRestored) {
  ScratchDir dir;
  QemuMachine qemu({.append = "auto=1 dump=none probe=lpt limit=0.1", .monitor = true}, dir / "");
  ASSERT_TRUE(qemu.wait_serial("ETT: analysis stage:", 90)) << qemu.serial();
  const std::string serial = qemu.serial();
  std::smatch match;
  ASSERT_TRUE(
      std::regex_search(serial, match,
                        std::regex("ETT: probe lpt at I/O 0x378: no ECR at 0x77a; input \\(control bit 5 "
                                   "set\\), checked: wrote 0x55/0xaa, read 0xff/0xff \\(control was "
                                   "0x([0-9a-f]{2})\\)")))
      << serial;
  EXPECT_NE(serial.find("ETT: captured 0 events (stop: deadline)"), std::string::npos) << serial;
  // After the capture the control register holds what the kernel found (direction bit clear again).
  const std::string control = qemu.monitor("i/b 0x37a");
  EXPECT_NE(control.find("portb[0x037a] = 0x" + match[1].str()), std::string::npos) << control;
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

}  // namespace
}  // namespace ett::test
