// qemu_disks_test.cpp: QEMU options for disks on each machine and interface (host-tools/harness/qemu_disks).
#include "harness/qemu_disks.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "harness/qemu_command.h"

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

TEST(QemuDisks, TheRunnersCommandLineFollowsMachineAndInterface) {
  RunOptions options;
  EXPECT_NE(joined(qemu_command(options, "k.elf", "/dev/shm/p", "t.img")).find("-M pc -accel tcg"),
            std::string::npos);
  EXPECT_NE(joined(qemu_command(options, "k.elf", "/dev/shm/p", "t.img"))
                .find(" -drive file=t.img,format=raw,if=ide,index=0 "),
            std::string::npos);
  options.machine = "q35";
  options.disk_interface = DiskInterface::Nvme;
  const std::string nvme = joined(qemu_command(options, "k.elf", "/dev/shm/p", "t.img"));
  EXPECT_NE(nvme.find("-M q35 -accel tcg"), std::string::npos) << nvme;
  EXPECT_NE(
      nvme.find(" -drive file=t.img,format=raw,if=none,id=ettdisk0 -device nvme,drive=ettdisk0,serial=ett0 "),
      std::string::npos)
      << nvme;
  EXPECT_EQ(nvme.find("if=ide"), std::string::npos) << nvme;
}

// A bad --machine or --disk-interface is one clear message and exit status 1; nothing is started.
TEST(QemuDisks, TheCommandLineRefusesUnknownMachinesAndInterfaces) {
  for (const std::string& args : {std::string("--machine isapc"), std::string("--disk-interface sata")}) {
    const std::string command =
        std::string(ETT_BIN_DIR) + "/ett qemu run --disk /nonexistent/t.img --scenario x " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buffer[512];
    while (std::fgets(buffer, sizeof(buffer), pipe)) output += buffer;
    const int status = ::pclose(pipe);
    EXPECT_EQ(WEXITSTATUS(status), 1) << output;
    EXPECT_NE(output.find(args.substr(0, args.find(' '))), std::string::npos) << output;
    EXPECT_NE(output.find(args.substr(args.find(' ') + 1)), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace ett::host
