// usb_handoff_test.cpp: the kernel's USB legacy handoff on QEMU's USB controllers. QEMU models the registers
// but no firmware in SMM: its usb-ehci has the legacy support capability at EECP 0x68 with the BIOS-owned
// semaphore clear, its qemu-xhci lists only supported-protocol capabilities, its pci-ohci routes interrupts
// to the OS, and SeaBIOS leaves the UHCI traps off. With a USB keyboard on a controller SeaBIOS leaves that
// controller running, and the kernel halts it. The kernel prints one line per controller and the capture runs
// as before.
#include <regex>

#include "qemu_direct.h"

namespace ett::test {
namespace {

std::string boot_hwlat(const std::vector<std::string>& devices, const std::string& extra = "") {
  ScratchDir dir;
  QemuMachine qemu({.append = "exit=qemu dump=none mode=hwlat limit=0.1" + extra, .qemu_args = devices},
                   dir / "");
  auto exit = qemu.wait_exit(90);
  EXPECT_TRUE(exit && exit->exited && exit->status == 33)
      << (exit ? exit->describe() : "running") << qemu.serial();
  return qemu.serial();
}

bool has_line(const std::string& serial, const std::string& pattern) {
  return std::regex_search(serial, std::regex(pattern));
}

TEST(UsbHandoffBoot, EveryControllerGetsItsLine) {
  const std::string serial = boot_hwlat(
      {"-device", "qemu-xhci", "-device", "usb-ehci", "-device", "piix3-usb-uhci", "-device", "pci-ohci"});
  constexpr const char* kAddress = R"(ETT: USB 00:[0-9a-f]{2}\.[0-7] )";
  EXPECT_TRUE(has_line(
      serial, std::string(kAddress) + R"(xHCI: no USB legacy support capability, nothing to hand off\n)"))
      << serial;
  EXPECT_TRUE(has_line(serial, std::string(kAddress) + R"(EHCI: handed off, the firmware did not own it\n)"))
      << serial;
  EXPECT_TRUE(has_line(serial, std::string(kAddress) + R"(UHCI: no legacy trap or SMI enabled\n)")) << serial;
  EXPECT_TRUE(has_line(serial, std::string(kAddress) + R"(OHCI: handed off, the firmware did not own it\n)"))
      << serial;
  EXPECT_EQ(serial.find("USB legacy support was on"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT OK"), std::string::npos) << serial;
  // Before the keyboard check, which depends on it (an 8042 the firmware only emulated goes away).
  EXPECT_LT(serial.find("ETT: USB "), serial.find("ETT: capturing")) << serial;
}

TEST(UsbHandoffBoot, ControllersLeftRunningAreHalted) {
  constexpr const char* kAddress = R"(ETT: USB 00:[0-9a-f]{2}\.[0-7] )";
  const std::string ehci = boot_hwlat({"-device", "usb-ehci,id=ehci", "-device", "usb-kbd,bus=ehci.0"});
  EXPECT_TRUE(
      has_line(ehci, std::string(kAddress) +
                         R"(EHCI: handed off, the firmware did not own it; halted it \(it was running\)\n)"))
      << ehci;
  const std::string xhci = boot_hwlat({"-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,bus=xhci.0"});
  EXPECT_TRUE(has_line(xhci, std::string(kAddress) +
                                 R"(xHCI: no USB legacy support capability, nothing to hand )"
                                 R"(off; halted it \(it was running\)\n)"))
      << xhci;
  const std::string ohci = boot_hwlat({"-device", "pci-ohci,id=ohci", "-device", "usb-kbd,bus=ohci.0"});
  EXPECT_TRUE(
      has_line(ohci, std::string(kAddress) +
                         R"(OHCI: handed off, the firmware did not own it; halted it \(it was running\)\n)"))
      << ohci;
}

TEST(UsbHandoffBoot, UsbKeepLeavesEveryControllerToTheFirmware) {
  const std::string serial =
      boot_hwlat({"-device", "usb-ehci,id=ehci", "-device", "usb-kbd,bus=ehci.0"}, " usb=keep");
  EXPECT_NE(serial.find("ETT: USB controllers left to the firmware (usb=keep"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("EHCI:"), std::string::npos) << serial;
  EXPECT_NE(serial.find("ETT: RESULT OK"), std::string::npos) << serial;
}

TEST(UsbHandoffBoot, NoControllerIsSaidOnce) {
  const std::string serial = boot_hwlat({});
  EXPECT_NE(serial.find("ETT: USB: no USB host controller\n"), std::string::npos) << serial;
}

}  // namespace
}  // namespace ett::test
