// storage_ahci_test.cpp: the AHCI driver (kernel/drivers/storage/ahci) against a register model of an HBA:
// handoff, staggered spin-up, COMRESET, port start/stop, IDENTIFY, DMA reads and writes, and odd or broken
// devices.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "drivers/storage/ahci.h"
#include "drivers/storage/ata_identify.h"
#include "storage_models.h"

namespace ett::test {
namespace {

using drivers::storage::AhciController;
using drivers::storage::AhciDisk;

constexpr uint32_t kSt = 1, kFre = 1u << 4, kFr = 1u << 14, kCr = 1u << 15;

struct AhciFixture : ::testing::Test {
  GuestMemory memory{4 << 20};
  SimClock clock;
  AhciModel hba{memory, 4, &clock};
  DmaArea area = memory.area(0x10000, AhciDisk::kDmaBytes);

  void add_disk(int port, size_t sectors, uint8_t fill = 0) {
    hba.ports[port].device = AhciModel::Device::Disk;
    hba.ports[port].disk.assign(sectors * 512, fill);
  }
  // PxCMD as the HBA reports it: ST and FRE as written, CR and FR as the engines run.
  uint32_t port_cmd(int port) { return hba.read32(0x100 + 0x80 * port + 0x18); }
};

TEST_F(AhciFixture, IdentifiesTheDiskAndMovesDataThroughDma) {
  add_disk(1, 2048);
  for (size_t i = 0; i < hba.ports[1].disk.size(); ++i) hba.ports[1].disk[i] = static_cast<uint8_t>(i * 7);
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_EQ(controller->port_count(), 4u);
  EXPECT_FALSE(controller->took_over_from_firmware());
  EXPECT_EQ(hba.ghc(), 0x80000000u) << "AHCI mode on, interrupts off";
  EXPECT_EQ(controller->link(0), AhciController::Link::NoDevice);
  ASSERT_EQ(controller->link(1), AhciController::Link::Up);

  auto disk = AhciDisk::open(*controller, 1, area);
  ASSERT_TRUE(disk) << disk.error().message;
  EXPECT_STREQ(disk->model(), "MODEL DISK");
  EXPECT_EQ(disk->sector_count(), 2048u);
  EXPECT_TRUE(disk->has_lba48());
  EXPECT_EQ(hba.ports[1].commands[0xEC], 1);
  EXPECT_TRUE(memory.contains(hba.ports[1].clb, area)) << "the command list is in the driver's DMA area";
  EXPECT_TRUE(memory.contains(hba.ports[1].fb, area));

  std::vector<uint8_t> sector(3 * 512);
  ASSERT_TRUE(disk->read(5, 3, sector.data()));
  EXPECT_TRUE(std::equal(sector.begin(), sector.end(), hba.ports[1].disk.begin() + 5 * 512));

  // 300 sectors: more than the bounce buffer, so three commands in order.
  std::vector<uint8_t> data(300 * 512);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
  ASSERT_TRUE(disk->write(100, 300, data.data()));
  EXPECT_TRUE(std::equal(data.begin(), data.end(), hba.ports[1].disk.begin() + 100 * 512));
  ASSERT_EQ(hba.ports[1].writes.size(), 3u);
  EXPECT_EQ(hba.ports[1].writes[0], (std::pair<uint64_t, uint32_t>{100, 128}));
  EXPECT_EQ(hba.ports[1].writes[2], (std::pair<uint64_t, uint32_t>{356, 44}));
  EXPECT_EQ(hba.ports[1].commands[0x35], 3) << "WRITE DMA EXT";
  ASSERT_TRUE(disk->flush());
  EXPECT_EQ(hba.ports[1].commands[0xEA], 1) << "FLUSH CACHE EXT";
  EXPECT_FALSE(disk->write(2047, 2, data.data())) << "past the end";

  ASSERT_TRUE(disk->close());
  EXPECT_EQ(hba.ports[1].cmd & (kSt | kFre), 0u) << "a closed port is stopped";
}

// The dump's path: chunks built in one staging buffer while the other is written, no copy.
TEST_F(AhciFixture, StagedWritesGoStraightFromTheStagingBuffers) {
  add_disk(0, 8192);
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 0, area);
  ASSERT_TRUE(disk);
  ASSERT_EQ(disk->staging_sectors(), AhciDisk::kStagingBytes / 512);
  uint8_t* first = disk->staging(0);
  uint8_t* second = disk->staging(1);
  ASSERT_NE(first, second);
  std::memset(first, 0x11, 512 * 512);
  ASSERT_TRUE(disk->start_write(10, 512, 0));
  EXPECT_FALSE(disk->start_write(600, 1, 1)) << "one write outstanding at a time";
  std::memset(second, 0x22, 100 * 512);
  ASSERT_TRUE(disk->finish_write());
  ASSERT_TRUE(disk->start_write(522, 100, 1));
  ASSERT_TRUE(disk->finish_write());
  ASSERT_TRUE(disk->finish_write()) << "nothing outstanding: returns at once";
  EXPECT_EQ(hba.ports[0].writes, (std::vector<std::pair<uint64_t, uint32_t>>{{10, 512}, {522, 100}}));
  EXPECT_EQ(hba.ports[0].disk[10 * 512], 0x11);
  EXPECT_EQ(hba.ports[0].disk[521 * 512 + 511], 0x11);
  EXPECT_EQ(hba.ports[0].disk[522 * 512], 0x22);
  EXPECT_EQ(hba.ports[0].disk[622 * 512], 0x00);
  EXPECT_FALSE(disk->start_write(8000, 512, 0)) << "past the end";
  EXPECT_FALSE(disk->start_write(0, disk->staging_sectors() + 1, 0)) << "more than a staging buffer";

  // A disk without LBA48 takes 256 sectors per command.
  AhciModel old(memory, 1);
  old.ports[0].device = AhciModel::Device::Disk;
  old.ports[0].lba48 = false;
  old.ports[0].disk.assign(512 * 1024, 0);
  auto old_hba = AhciController::open(old, clock);
  ASSERT_TRUE(old_hba);
  auto old_disk = AhciDisk::open(*old_hba, 0, area);
  ASSERT_TRUE(old_disk);
  EXPECT_EQ(old_disk->staging_sectors(), 256u);
}

TEST_F(AhciFixture, APortTheFirmwareLeftRunningIsStoppedAndGivenOurMemory) {
  add_disk(0, 64);
  hba.ports[0].cmd = kSt | kFre;
  hba.ports[0].clb = 0x9000;  // the firmware's command list, in what becomes the capture buffer
  hba.ports[0].fb = 0x9400;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 0, area);
  ASSERT_TRUE(disk) << disk.error().message;
  for (uint64_t clb : hba.ports[0].command_lists) EXPECT_TRUE(memory.contains(clb, area));
}

TEST_F(AhciFixture, TheFirmwareHandsTheControllerOver) {
  add_disk(0, 64);
  hba.firmware_owned(3, false);
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_TRUE(controller->took_over_from_firmware());
  EXPECT_TRUE(hba.took_ownership());
}

TEST_F(AhciFixture, ABusyFirmwareGetsTwoSeconds) {
  hba.firmware_owned(20'000, true);  // BB set; lets go after 20,000 polls (200 ms of the simulated clock)
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_GE(clock.ms(), 25u);
  EXPECT_FALSE(controller->firmware_kept_ownership());
}

// AHCI 1.3.1 10.6.3 and FreeBSD: 25 ms for the firmware to let go, 2 s more while it says it is busy, then
// the controller is used anyway: refusing it would leave the trace disk unfound.
TEST_F(AhciFixture, FirmwareThatNeverLetsGoIsWaitedForThenPassedOver) {
  add_disk(0, 64);
  hba.firmware_owned(-1, false);
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_TRUE(controller->took_over_from_firmware());
  EXPECT_TRUE(controller->firmware_kept_ownership());
  EXPECT_GE(clock.ms(), 25u);
  EXPECT_LT(clock.ms(), 100u) << "no extra wait for firmware that does not say it is busy";
  auto disk = AhciDisk::open(*controller, 0, area);
  EXPECT_TRUE(disk) << disk.error().message;

  SimClock busy_clock;
  AhciModel busy(memory, 1, &busy_clock);
  busy.firmware_owned(-1, true);
  auto busy_controller = AhciController::open(busy, busy_clock);
  ASSERT_TRUE(busy_controller) << busy_controller.error().message;
  EXPECT_TRUE(busy_controller->firmware_kept_ownership());
  EXPECT_GE(busy_clock.ms(), 2'025u) << "BB: two more seconds";
  EXPECT_LT(busy_clock.ms(), 2'100u);
}

TEST_F(AhciFixture, APortThatNeverClearsBsyIsResetThenTimesOutAndIsLeftStopped) {
  add_disk(2, 64);
  hba.ports[2].busy_forever = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  const uint64_t before = clock.ms();
  auto disk = AhciDisk::open(*controller, 2, area);
  ASSERT_FALSE(disk);
  EXPECT_STREQ(disk.error().message, "ahci: the device stays busy after a COMRESET (PxTFD.BSY or DRQ set)");
  EXPECT_EQ(hba.ports[2].comresets, 1);
  EXPECT_GE(clock.ms() - before, 10'000u);
  EXPECT_TRUE(hba.ports[2].commands.empty());
  EXPECT_EQ(port_cmd(2) & (kSt | kCr | kFre | kFr), 0u) << "no DMA engine left running after the failure";
}

// A drive the firmware left busy (BSY) answers again after a COMRESET.
TEST_F(AhciFixture, ABusyPortIsResetAndThenWorks) {
  add_disk(1, 64);
  hba.ports[1].busy_until_reset = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 1, area);
  ASSERT_TRUE(disk) << disk.error().message;
  EXPECT_EQ(hba.ports[1].comresets, 1);
  EXPECT_EQ(hba.ports[1].commands[0xEC], 1);
  EXPECT_EQ(hba.ports[1].serr, 0u) << "DIAG.X from the COMRESET is cleared";
}

// Errors recorded in PxSERR.ERR mean a reset; the DIAG half alone (link events) does not.
TEST_F(AhciFixture, APortWithRecordedErrorsIsReset) {
  add_disk(0, 64);
  add_disk(1, 64);
  hba.ports[0].serr = 1u << 9;   // ERR.P: a protocol error
  hba.ports[1].serr = 1u << 26;  // DIAG.X only
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto first = AhciDisk::open(*controller, 0, area);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(hba.ports[0].comresets, 1);
  ASSERT_TRUE(first->close());
  auto second = AhciDisk::open(*controller, 1, area);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(hba.ports[1].comresets, 0);
}

// UEFI "Fast Boot" leaves the link of a disk it did not boot from down (PxSSTS.DET=1): a COMRESET brings it
// up, held for at least 1 ms (the model checks) on a stopped port.
TEST_F(AhciFixture, ALinkLeftDownComesUpAfterComreset) {
  add_disk(1, 64);
  hba.ports[1].link_down = true;
  hba.ports[2].device = AhciModel::Device::Offline;  // never links, COMRESET or not
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  ASSERT_EQ(controller->link(1), AhciController::Link::Offline);
  for (uint32_t port = 0; port < 4; ++port) ASSERT_TRUE(controller->stop_port(port));
  const uint64_t before = clock.ms();
  controller->spin_up_ports();
  EXPECT_LE(clock.ms() - before, 2 * 101u) << "each COMRESET waits 100 ms at most";
  EXPECT_EQ(controller->link(1), AhciController::Link::Up);
  EXPECT_EQ(hba.ports[1].comresets, 1);
  EXPECT_EQ(controller->link(2), AhciController::Link::Offline);
  EXPECT_EQ(hba.ports[2].comresets, 1);
  EXPECT_EQ(hba.ports[0].comresets + hba.ports[3].comresets, 0) << "ports without a device are left alone";
  EXPECT_EQ(hba.ports[1].sctl & 0x30Fu, 0x300u) << "DET released; no Partial/Slumber";
  auto disk = AhciDisk::open(*controller, 1, area);
  EXPECT_TRUE(disk) << disk.error().message;

  auto again = controller->reset_port(2);
  ASSERT_FALSE(again);
  EXPECT_STREQ(again.error().message, "ahci: no link after COMRESET (PxSSTS.DET is not 3 within 100 ms)");
  auto running = controller->reset_port(1);
  ASSERT_FALSE(running) << "port 1 runs the open disk's command list";
  EXPECT_STREQ(running.error().message,
               "ahci: COMRESET refused: the port's command list runs (PxCMD.ST or CR set)");
}

TEST_F(AhciFixture, ACommandThatNeverCompletesTimesOutAndStopsThePort) {
  add_disk(0, 64);
  hba.ports[0].never_complete = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 0, area);
  ASSERT_FALSE(disk);
  EXPECT_STREQ(disk.error().message, "ahci: timed out waiting for a command to complete (PxCI stays set)");
  EXPECT_EQ(hba.ports[0].cmd & kSt, 0u) << "the HBA may not finish the command into reused memory";
}

TEST_F(AhciFixture, AFailedWriteIsAnErrorAndThePortStillWorks) {
  add_disk(0, 64, 0xAB);
  hba.ports[0].fail_writes = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 0, area);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(512, 1);
  auto wrote = disk->write(3, 1, data.data());
  ASSERT_FALSE(wrote);
  EXPECT_STREQ(wrote.error().message, "ahci: WRITE DMA failed (the device reported an error)");
  EXPECT_EQ(hba.ports[0].disk[3 * 512], 0xAB);
  std::vector<uint8_t> sector(512);
  ASSERT_TRUE(disk->read(3, 1, sector.data())) << "the port restarts after a task-file error";
  EXPECT_EQ(sector[0], 0xAB);
}

TEST_F(AhciFixture, AnAtapiDeviceIsNamedAndLeftStopped) {
  hba.ports[3].device = AhciModel::Device::Atapi;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  AhciDisk::Kind kind = AhciDisk::Kind::Disk;
  auto disk = AhciDisk::open(*controller, 3, area, &kind);
  ASSERT_FALSE(disk);
  EXPECT_EQ(kind, AhciDisk::Kind::Atapi);
  EXPECT_STREQ(disk.error().message, "ahci: an ATAPI device (CD/DVD), not a disk");
  EXPECT_EQ(port_cmd(3) & (kSt | kCr | kFre | kFr), 0u);
  EXPECT_TRUE(hba.ports[3].commands.empty()) << "nothing is sent to it";
}

TEST_F(AhciFixture, LinkStates) {
  hba.ports[1].device = AhciModel::Device::Offline;
  add_disk(2, 8);
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  EXPECT_EQ(controller->link(0), AhciController::Link::NoDevice);
  EXPECT_EQ(controller->link(1), AhciController::Link::Offline);
  EXPECT_EQ(controller->link(2), AhciController::Link::Up);
}

TEST_F(AhciFixture, StaggeredSpinUpBringsTheLinksUp) {
  add_disk(1, 64);
  hba.ports[3].device = AhciModel::Device::Atapi;
  hba.staggered_spin_up = true;
  hba.link_polls = 1000;  // 10 ms of polls
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  EXPECT_EQ(controller->link(1), AhciController::Link::Offline) << "no link before spin-up";
  const uint64_t before = clock.ms();
  controller->spin_up_ports();
  EXPECT_LE(clock.ms() - before, 4 * 11u) << "a port without a device is waited for 10 ms at most";
  EXPECT_EQ(hba.overlapping_spin_ups, 0) << "one device spins up at a time";
  EXPECT_EQ(controller->link(0), AhciController::Link::NoDevice);
  EXPECT_EQ(controller->link(1), AhciController::Link::Up);
  EXPECT_EQ(controller->link(3), AhciController::Link::Up);
  for (const auto& port : hba.ports) EXPECT_TRUE(port.cmd & 2) << "PxCMD.SUD";
  auto disk = AhciDisk::open(*controller, 1, area);
  EXPECT_TRUE(disk) << disk.error().message;
}

TEST_F(AhciFixture, ACommandListThatNeverStopsIsAnError) {
  add_disk(0, 64);
  hba.ports[0].list_stuck = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_TRUE(controller);
  auto disk = AhciDisk::open(*controller, 0, area);
  ASSERT_TRUE(disk);
  auto closed = disk->close();
  ASSERT_FALSE(closed);
  EXPECT_STREQ(closed.error().message, "ahci: the port's command list did not stop (PxCMD.CR stays set)");
}

TEST_F(AhciFixture, ARefusedSetup) {
  hba.pi_empty = true;
  auto controller = AhciController::open(hba, clock);
  ASSERT_FALSE(controller);
  EXPECT_STREQ(controller.error().message, "ahci: the controller implements no ports (PI = 0)");

  AhciModel good(memory, 1);
  good.ports[0].device = AhciModel::Device::Disk;
  good.ports[0].disk.assign(512 * 8, 0);
  auto hba_ok = AhciController::open(good, clock);
  ASSERT_TRUE(hba_ok);
  auto misaligned = AhciDisk::open(*hba_ok, 0, memory.area(0x10200, AhciDisk::kDmaBytes));
  ASSERT_FALSE(misaligned);
  EXPECT_STREQ(misaligned.error().message, "ahci: the DMA area is too small or not 4 KiB aligned");
}

// A 4Kn SATA disk: IDENTIFY word 106 valid with bit 12, words 117-118 = 2048 words per logical sector. The
// driver counts 512-byte sectors, the commands logical sectors, and a partial block is refused.
TEST_F(AhciFixture, AFourKnDiskIsAddressedInSectorsAndCommandedInLogicalSectors) {
  for (const uint32_t logical : {4096u, 1024u}) {
    AhciModel model(memory, 4, &clock);
    model.ports[0].device = AhciModel::Device::Disk;
    model.ports[0].disk.assign(600 * size_t{logical}, 0);
    model.ports[0].word106 = 0x4000 | (1u << 12);
    model.ports[0].logical_bytes = logical;
    for (const bool lba48 : {true, false}) {
      model.ports[0].lba48 = lba48;
      model.ports[0].writes.clear();
      auto controller = AhciController::open(model, clock);
      ASSERT_TRUE(controller) << controller.error().message;
      auto disk = AhciDisk::open(*controller, 0, area);
      ASSERT_TRUE(disk) << disk.error().message;
      const uint32_t per = logical / 512;
      EXPECT_EQ(disk->block_size(), logical);
      EXPECT_EQ(disk->sector_count(), 600u * per);
      EXPECT_EQ(disk->staging_sectors() % per, 0u);

      std::vector<uint8_t> data(40 * size_t{logical});  // more than the 64 KiB bounce buffer when 4 KiB
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + logical + lba48);
      ASSERT_TRUE(disk->write(7 * per, 40 * per, data.data()));
      ASSERT_FALSE(model.ports[0].writes.empty());
      EXPECT_EQ(model.ports[0].writes.front().first, 7u) << "the LBA in logical sectors";
      uint32_t total = 0;
      for (const auto& w : model.ports[0].writes) total += w.second;
      EXPECT_EQ(total, 40u) << "the counts in logical sectors";
      EXPECT_TRUE(std::equal(data.begin(), data.end(), model.ports[0].disk.begin() + 7 * size_t{logical}));
      std::vector<uint8_t> back(data.size());
      ASSERT_TRUE(disk->read(7 * per, 40 * per, back.data()));
      EXPECT_EQ(back, data);

      std::memset(disk->staging(0), 0xA5, 2 * size_t{logical});
      ASSERT_TRUE(disk->start_write(100 * per, 2 * per, 0));
      ASSERT_TRUE(disk->finish_write());
      EXPECT_EQ(model.ports[0].writes.back(), (std::pair<uint64_t, uint32_t>{100, 2}));

      const size_t writes = model.ports[0].writes.size();
      EXPECT_FALSE(disk->write(per - 1, per, data.data()));
      EXPECT_FALSE(disk->read(0, 1, back.data()));
      EXPECT_FALSE(disk->start_write(0, per + 1, 0));
      EXPECT_EQ(model.ports[0].writes.size(), writes) << "a partial block never reaches the disk";
      ASSERT_TRUE(disk->close());
    }
  }
}

// Word 106 is used only when bits 15:14 are 01: any other pattern means 512-byte sectors, whatever words
// 117-118 hold. A valid word 106 naming a size no driver takes is refused by name.
TEST_F(AhciFixture, OddLogicalSectorWordsAreIgnoredOrRefused) {
  for (const uint16_t word106 : {uint16_t{0x8000 | (1u << 12)}, uint16_t{0xC000 | (1u << 12)},
                                 uint16_t{0x0000 | (1u << 12)}, uint16_t{0xFFFF}, uint16_t{0x4000}}) {
    AhciModel model(memory, 1, &clock);
    model.ports[0].device = AhciModel::Device::Disk;
    model.ports[0].disk.assign(64 * 512, 0);
    model.ports[0].word106 = word106;
    auto controller = AhciController::open(model, clock);
    ASSERT_TRUE(controller);
    auto disk = AhciDisk::open(*controller, 0, area);
    ASSERT_TRUE(disk) << std::hex << word106;
    EXPECT_EQ(disk->block_size(), 512u) << std::hex << word106;
    EXPECT_EQ(disk->sector_count(), 64u);
    ASSERT_TRUE(disk->close());
  }
  for (const uint32_t logical : {520u, 8192u, 0u}) {
    AhciModel model(memory, 1, &clock);
    model.ports[0].device = AhciModel::Device::Disk;
    model.ports[0].disk.assign(64 * 8192, 0);
    model.ports[0].word106 = 0x4000 | (1u << 12);
    model.ports[0].logical_bytes = logical == 0 ? 512 : logical;
    auto controller = AhciController::open(model, clock);
    ASSERT_TRUE(controller);
    if (logical == 0) {
      // Words 117-118 of 0: a valid word 106 with bit 12 and no size.
      std::vector<uint16_t> words(256, 0);
      words[106] = 0x4000 | (1u << 12);
      EXPECT_EQ(drivers::storage::parse_identify(words.data()).logical_sector_bytes, 0u);
      continue;
    }
    auto disk = AhciDisk::open(*controller, 0, area);
    ASSERT_FALSE(disk) << logical;
    EXPECT_EQ(std::string(disk.error().message),
              "ahci: the disk's logical sectors are " + std::to_string(logical) +
                  " bytes (IDENTIFY words 106, 117-118); a trace disk needs 512-, 1024-, 2048- or 4096-byte "
                  "sectors");
  }
}

}  // namespace
}  // namespace ett::test
