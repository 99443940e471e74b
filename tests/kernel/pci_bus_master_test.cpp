// pci_bus_master_test.cpp: which PCI functions keep bus mastering during the capture
// (x86::pci::keeps_bus_master).
#include <gtest/gtest.h>

#include "arch/x86/pci.h"

namespace ett::x86::pci {
namespace {

TEST(KernelPciBusMaster, BridgesDisplaysStorageAndUsbKeepIt) {
  EXPECT_TRUE(keeps_bus_master(0x06, 0x04));  // PCI-to-PCI bridge: everything behind it needs it
  EXPECT_TRUE(keeps_bus_master(0x06, 0x00));  // host bridge
  EXPECT_TRUE(keeps_bus_master(0x03, 0x00));  // VGA: the screen
  EXPECT_TRUE(keeps_bus_master(0x01, 0x06));  // AHCI: the trace disk's controller may be this one
  EXPECT_TRUE(keeps_bus_master(0x01, 0x08));  // NVMe
  EXPECT_TRUE(keeps_bus_master(0x01, 0x01));  // IDE
  EXPECT_TRUE(keeps_bus_master(0x0C, 0x03));  // USB: the firmware's keyboard emulation
}

TEST(KernelPciBusMaster, OtherDevicesAreStopped) {
  EXPECT_FALSE(keeps_bus_master(0x02, 0x00));  // Ethernet (PXE's receive ring)
  EXPECT_FALSE(keeps_bus_master(0x04, 0x03));  // HD audio
  EXPECT_FALSE(keeps_bus_master(0x0C, 0x05));  // SMBus
  EXPECT_FALSE(keeps_bus_master(0x07, 0x01));  // a parallel card that is not the probe
  EXPECT_FALSE(keeps_bus_master(0x0D, 0x11));  // Bluetooth
}

}  // namespace
}  // namespace ett::x86::pci
