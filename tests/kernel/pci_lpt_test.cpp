// pci_lpt_test.cpp: which PCI parallel cards the kernel takes (class 07/01 with an interface that can read
// its lines) and which BARs hold the SPP registers and the ECR (drivers/probe/pci_lpt_registers.cpp).
#include "drivers/probe/pci_lpt.h"

#include <gtest/gtest.h>

namespace ett::drivers {
namespace {

x86::pci::Bar io(uint64_t address, uint64_t size) {
  return {address, size, true, false, false};
}
x86::pci::Bar memory(uint64_t address, uint64_t size) {
  return {address, size, false, false, false};
}

TEST(KernelPciLpt, OnlyParallelInterfacesThatCanReadTheirLines) {
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x01));   // bidirectional
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x02));   // ECP
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x03));   // IEEE 1284 controller
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x01, 0x00));  // SPP: output only
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x01, 0xFE));  // the printer's side
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x00, 0x02));  // a serial port (16550)
  EXPECT_FALSE(PciLpt::can_do_input(0x01, 0x01, 0x01));
  EXPECT_STREQ(PciLpt::interface_name(0x00), "SPP, output only");
}

TEST(KernelPciLpt, SppInTheFirstIoBarEcrInTheSecond) {
  const x86::pci::Bar bars[6] = {io(0xE000, 8), io(0xE100, 4), {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_bar, 0);
  EXPECT_EQ(r->spp_base, 0xE000);
  EXPECT_EQ(r->ecr_bar, 1);
  EXPECT_EQ(r->ecr_port, 0xE102);
}

TEST(KernelPciLpt, MemoryAndUnassignedBarsAreSkipped) {
  const x86::pci::Bar bars[6] = {memory(0xFEB00000, 4096), io(0, 8),      io(0xD000, 8),
                                 memory(0xFEB01000, 4096), io(0xD010, 8), {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_bar, 2);
  EXPECT_EQ(r->spp_base, 0xD000);
  EXPECT_EQ(r->ecr_bar, 4);
  EXPECT_EQ(r->ecr_port, 0xD012);
}

TEST(KernelPciLpt, ACardWithOneIoBarHasNoEcr) {
  const x86::pci::Bar bars[6] = {io(0xC000, 8), {}, {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_base, 0xC000);
  EXPECT_EQ(r->ecr_port, 0);
}

TEST(KernelPciLpt, NoUsableIoBarIsAnError) {
  const x86::pci::Bar bars[6] = {memory(0xFEB00000, 4096), io(0xC000, 2), {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.error().message).find("no usable I/O BAR"), std::string::npos);
}

}  // namespace
}  // namespace ett::drivers
