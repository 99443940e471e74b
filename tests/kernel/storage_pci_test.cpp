// storage_pci_test.cpp: BAR decoding (kernel/arch/x86/pci.h) and what the trace disk search reads from a
// storage controller's PCI header (kernel/drivers/storage/storage_pci): classes, native-mode IDE ports, and a
// memory BAR above 4 GiB.
#include "drivers/storage/storage_pci.h"

#include <gtest/gtest.h>

#include <string>

namespace ett::drivers::storage {
namespace {

using x86::pci::Bar;
using x86::pci::BarProbe;
using x86::pci::decode_bar;

TEST(StoragePci, DecodesBars) {
  // 32-bit memory BAR of 8 KiB (AHCI's ABAR).
  Bar bar = decode_bar({0xFEBF1000, 0, 0xFFFFE000, 0xFFFFFFFF});
  EXPECT_FALSE(bar.is_io);
  EXPECT_FALSE(bar.is_64bit);
  EXPECT_EQ(bar.address, 0xFEBF1000u);
  EXPECT_EQ(bar.size, 0x2000u);
  // I/O BAR of 8 ports (an IDE command block).
  bar = decode_bar({0xC001, 0, 0xFFFFFFF9, 0xFFFFFFFF});
  EXPECT_TRUE(bar.is_io);
  EXPECT_EQ(bar.address, 0xC000u);
  EXPECT_EQ(bar.size, 8u);
  // 64-bit prefetchable memory BAR of 16 KiB above 4 GiB (an NVMe BAR0 with "Above 4G decoding" on).
  bar = decode_bar({0x0000000C, 0x00000008, 0xFFFFC00C, 0xFFFFFFFF});
  EXPECT_TRUE(bar.is_64bit);
  EXPECT_TRUE(bar.prefetchable);
  EXPECT_EQ(bar.address, 0x800000000ull);
  EXPECT_EQ(bar.size, 0x4000u);
  // Unimplemented BARs.
  EXPECT_EQ(decode_bar({0, 0, 0, 0xFFFFFFFF}).size, 0u);
  EXPECT_EQ(decode_bar({0x4, 0, 0, 0}).size, 0u);
}

TEST(StoragePci, ANvmeBarAbove4GiBIsRefusedClearly) {
  const Bar bar = decode_bar({0x0000000C, 0x00000008, 0xFFFFC00C, 0xFFFFFFFF});
  auto base = reachable_mmio(bar, 0, 0x2000);
  ASSERT_FALSE(base);
  EXPECT_STREQ(
      base.error().message,
      "BAR0 at 0x800000000 (16 KiB) lies above 4 GiB: this 32-bit kernel runs with paging off and cannot "
      "reach it (turn off \"Above 4G decoding\" in the firmware setup)");
  // Below 4 GiB, the same 64-bit BAR is used as it is; one that ends past 4 GiB is not.
  auto low = reachable_mmio(decode_bar({0xFEBD000C, 0, 0xFFFFC00C, 0xFFFFFFFF}), 0, 0x2000);
  ASSERT_TRUE(low);
  EXPECT_EQ(*low, 0xFEBD0000u);
  EXPECT_FALSE(reachable_mmio(decode_bar({0xFFFFF00C, 0, 0xFFFFC00C, 0xFFFFFFFF}), 0, 0x2000));
  // Not assigned, an I/O BAR, too small.
  EXPECT_STREQ(reachable_mmio(decode_bar({0, 0, 0xFFFFC000, 0xFFFFFFFF}), 5, 0x100).error().message,
               "BAR5 is not assigned (address 0): the firmware left it off");
  EXPECT_FALSE(reachable_mmio(decode_bar({0xC001, 0, 0xFFFFFFF9, 0xFFFFFFFF}), 5, 0x100));
  EXPECT_FALSE(reachable_mmio(decode_bar({0xFEBF1000, 0, 0xFFFFFF80, 0xFFFFFFFF}), 5, 0x100));
}

TEST(StoragePci, Classifies) {
  EXPECT_EQ(classify(0x01, 0x01, 0x80), ControllerKind::Ide);
  EXPECT_EQ(classify(0x01, 0x06, 0x01), ControllerKind::Ahci);
  EXPECT_EQ(classify(0x01, 0x06, 0x00), ControllerKind::OtherStorage) << "SATA in vendor mode";
  EXPECT_EQ(classify(0x01, 0x08, 0x02), ControllerKind::Nvme);
  EXPECT_EQ(classify(0x01, 0x04, 0x00), ControllerKind::OtherStorage) << "RAID";
  EXPECT_EQ(classify(0x07, 0x01, 0x02), ControllerKind::NotStorage);
}

TEST(StoragePci, IdeChannelPortsFollowTheProgrammingInterface) {
  const Bar command = decode_bar({0xC041, 0, 0xFFFFFFF9, 0xFFFFFFFF});
  const Bar control = decode_bar({0xC035, 0, 0xFFFFFFFD, 0xFFFFFFFF});
  // PIIX in compatibility mode (0x80): the legacy ports, whatever the BARs say.
  auto primary = ide_channel_ports(0x80, 0, command, control);
  ASSERT_TRUE(primary);
  EXPECT_EQ(primary->command, 0x1F0);
  EXPECT_EQ(primary->control, 0x3F6);
  EXPECT_FALSE(primary->native);
  auto secondary = ide_channel_ports(0x80, 1, command, control);
  EXPECT_EQ(secondary->command, 0x170);
  EXPECT_EQ(secondary->control, 0x376);
  // Native mode on both channels (0x8F): the BARs; the control block's register is 2 into its BAR.
  auto native = ide_channel_ports(0x8F, 1, command, control);
  ASSERT_TRUE(native);
  EXPECT_TRUE(native->native);
  EXPECT_EQ(native->command, 0xC040);
  EXPECT_EQ(native->control, 0xC036);
  EXPECT_FALSE(ide_channel_native(0x85, 0) && !ide_channel_native(0x85, 1));
  EXPECT_TRUE(ide_channel_native(0x84, 1));
  EXPECT_FALSE(ide_channel_native(0x84, 0));
  // Native mode with BARs the firmware did not assign.
  auto unassigned = ide_channel_ports(0x85, 0, decode_bar({0x1, 0, 0xFFFFFFF9, 0xFFFFFFFF}), control);
  ASSERT_FALSE(unassigned);
  EXPECT_STREQ(unassigned.error().message,
               "native-mode IDE channel without I/O BARs (not assigned by the firmware)");
}

}  // namespace
}  // namespace ett::drivers::storage
