// qemu_disks_test.cpp: QEMU options for disks on each machine and interface (host-tools/harness/qemu_disks).
#include "harness/qemu_disks.h"

#include <gtest/gtest.h>

namespace ett::host {
namespace {

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) out += (out.empty() ? "" : " ") + word;
  return out;
}

TEST(QemuDisks, ParsesInterfacesAndMachines) {
  EXPECT_EQ(parse_disk_interface("ide"), DiskInterface::Ide);
  EXPECT_EQ(parse_disk_interface("ahci"), DiskInterface::Ahci);
  EXPECT_EQ(parse_disk_interface("nvme"), DiskInterface::Nvme);
  EXPECT_FALSE(parse_disk_interface("sata"));
  EXPECT_FALSE(parse_disk_interface("IDE"));
  EXPECT_TRUE(is_supported_machine("pc"));
  EXPECT_TRUE(is_supported_machine("q35"));
  EXPECT_FALSE(is_supported_machine("isapc"));
}

TEST(QemuDisks, IdeOnPcIsTheLegacyChannels) {
  EXPECT_EQ(
      joined(disk_arguments("pc", {{"a.img", DiskInterface::Ide, 0}, {"b.img", DiskInterface::Ide, 3}})),
      "-drive file=a.img,format=raw,if=ide,index=0 -drive file=b.img,format=raw,if=ide,index=3");
  EXPECT_EQ(joined(disk_arguments("pc", {{"a.img", DiskInterface::Ide, 1}}, ",throttling.bps-write=1")),
            "-drive file=a.img,format=raw,if=ide,index=1,throttling.bps-write=1");
}

TEST(QemuDisks, IdeOnQ35AddsAPiix3Controller) {
  EXPECT_EQ(joined(disk_arguments("q35", {{"a.img", DiskInterface::Ide, 3}})),
            "-device piix3-ide,id=ettide -drive file=a.img,format=raw,if=none,id=ettdisk0 "
            "-device ide-hd,drive=ettdisk0,bus=ettide.1,unit=1");
}

TEST(QemuDisks, AhciUsesQ35sControllerOrAddsOneToPc) {
  EXPECT_EQ(joined(disk_arguments("q35", {{"a.img", DiskInterface::Ahci, 1}})),
            "-drive file=a.img,format=raw,if=none,id=ettdisk0 -device ide-hd,drive=ettdisk0,bus=ide.1");
  EXPECT_EQ(joined(disk_arguments("pc", {{"a.img", DiskInterface::Ahci, 0}})),
            "-device ahci,id=ettahci -drive file=a.img,format=raw,if=none,id=ettdisk0 "
            "-device ide-hd,drive=ettdisk0,bus=ettahci.0");
}

TEST(QemuDisks, NvmeControllersFollowTheirSlots) {
  EXPECT_EQ(joined(disk_arguments(
                "q35", {{"trace.img", DiskInterface::Nvme, 1}, {"other.img", DiskInterface::Nvme, 0}})),
            "-drive file=other.img,format=raw,if=none,id=ettdisk0 -device nvme,drive=ettdisk0,serial=ett0 "
            "-drive file=trace.img,format=raw,if=none,id=ettdisk1 -device nvme,drive=ettdisk1,serial=ett1");
}

}  // namespace
}  // namespace ett::host
