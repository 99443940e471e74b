// storage_nvme_test.cpp: the NVMe driver (kernel/drivers/storage/nvme) against a register model of a
// controller: bring-up, IDENTIFY, the I/O queue pair, PRP lists, and odd or broken controllers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "drivers/storage/nvme.h"
#include "storage_models.h"

namespace ett::test {
namespace {

using drivers::storage::NvmeController;
using drivers::storage::NvmeDisk;

struct NvmeFixture : ::testing::Test {
  GuestMemory memory{4 << 20};
  SimClock clock;
  NvmeModel nvme{memory};
  DmaArea area = memory.area(0x20000, NvmeController::kDmaBytes);

  void add_namespace(size_t blocks, uint32_t block_bytes = 512) {
    NvmeModel::Namespace ns;
    ns.block_bytes = block_bytes;
    ns.data.assign(blocks * block_bytes, 0);
    for (size_t i = 0; i < ns.data.size(); ++i) ns.data[i] = static_cast<uint8_t>(i * 3 + 5);
    nvme.namespaces.push_back(ns);
  }
};

TEST_F(NvmeFixture, BringsTheControllerUpAndMovesDataThroughPrpLists) {
  add_namespace(1024);
  add_namespace(4096);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_EQ(nvme.enables, 1);
  EXPECT_STREQ(controller->model(), "MODEL NVME");
  uint32_t nsids[8];
  auto count = controller->active_namespaces(nsids, 8);
  ASSERT_TRUE(count);
  ASSERT_EQ(*count, 2u);
  EXPECT_EQ(nsids[1], 2u);

  auto disk = NvmeDisk::open(*controller, 2);
  ASSERT_TRUE(disk) << disk.error().message;
  EXPECT_EQ(disk->sector_count(), 4096u);
  EXPECT_STREQ(disk->model(), "MODEL NVME");

  // One page, two pages (PRP2 is the second page), 64 KiB (a PRP list), 200 sectors (two commands).
  for (uint32_t sectors : {1u, 8u, 16u, 128u, 200u}) {
    std::vector<uint8_t> data(sectors * 512);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 11 + sectors);
    ASSERT_TRUE(disk->write(1000, sectors, data.data())) << sectors;
    EXPECT_TRUE(std::equal(data.begin(), data.end(), nvme.namespaces[1].data.begin() + 1000 * 512))
        << sectors;
    std::vector<uint8_t> back(data.size());
    ASSERT_TRUE(disk->read(1000, sectors, back.data())) << sectors;
    EXPECT_EQ(back, data) << sectors;
  }
  EXPECT_EQ(nvme.writes.back(), (std::pair<uint64_t, uint32_t>{1128, 72}));
  ASSERT_TRUE(disk->flush());
  EXPECT_EQ(nvme.io_commands[0x00], 1);
  EXPECT_FALSE(disk->write(4095, 2, nullptr)) << "past the end of the namespace";
  EXPECT_TRUE(std::all_of(nvme.namespaces[0].data.begin(), nvme.namespaces[0].data.begin() + 512,
                          [&, i = 0](uint8_t b) mutable { return b == static_cast<uint8_t>(i++ * 3 + 5); }))
      << "namespace 1 untouched";
}

TEST_F(NvmeFixture, ManyCommandsWrapTheQueuesAndFlipThePhase) {
  add_namespace(64);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> sector(512);
  for (uint32_t i = 0; i < 50; ++i) {
    sector[0] = static_cast<uint8_t>(i);
    ASSERT_TRUE(disk->write(i % 64, 1, sector.data())) << i;
  }
  EXPECT_EQ(nvme.io_commands[0x01], 50);
  EXPECT_EQ(nvme.namespaces[0].data[49 * 512], 49);
}

TEST_F(NvmeFixture, TheTransferLimitSplitsCommands) {
  add_namespace(256);
  nvme.mdts = 1;  // 8 KiB per command
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  EXPECT_EQ(controller->max_transfer_bytes(), 8192u);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(64 * 512, 0x5A);
  ASSERT_TRUE(disk->write(0, 64, data.data()));
  EXPECT_EQ(nvme.writes.size(), 4u);
}

// The dump's path: chunks built in one staging buffer while the other is written. With a transfer limit of
// 8 KiB, a whole buffer is 128 commands: more than the queue holds, so some complete before the last is
// posted; QEMU's limit (512 KiB) is half a buffer; without a limit a buffer is one command.
TEST_F(NvmeFixture, StagedWritesGoStraightFromTheStagingBuffers) {
  for (uint8_t mdts : {uint8_t{0}, uint8_t{1}, uint8_t{7}}) {
    NvmeModel model(memory);
    model.mdts = mdts;
    NvmeModel::Namespace ns;
    ns.data.assign(4096 * 512, 0);
    model.namespaces.push_back(ns);
    auto controller = NvmeController::open(model, clock, area);
    ASSERT_TRUE(controller);
    auto disk = NvmeDisk::open(*controller, 1);
    ASSERT_TRUE(disk);
    const uint32_t sectors = disk->staging_sectors();
    ASSERT_EQ(sectors, NvmeController::kStagingBytes / 512);
    for (uint32_t i = 0; i < sectors * 512; ++i) disk->staging(0)[i] = static_cast<uint8_t>(i / 512 + 1);
    ASSERT_TRUE(disk->start_write(100, sectors, 0));
    EXPECT_FALSE(disk->start_write(3000, 8, 1)) << "one write outstanding at a time";
    std::memset(disk->staging(1), 0x77, 24 * 512);
    ASSERT_TRUE(disk->finish_write());
    ASSERT_TRUE(disk->start_write(100 + sectors, 24, 1));
    ASSERT_TRUE(disk->finish_write());
    const size_t expected = mdts == 0 ? 1 + 1 : mdts == 1 ? sectors / 16 + 2 : 2 + 1;
    EXPECT_EQ(model.writes.size(), expected) << int{mdts};
    for (uint32_t sector = 0; sector < sectors; ++sector)
      ASSERT_EQ(model.namespaces[0].data[(100 + sector) * 512 + 7], static_cast<uint8_t>(sector + 1))
          << sector;
    EXPECT_EQ(model.namespaces[0].data[(100 + sectors) * 512], 0x77);
    EXPECT_EQ(model.namespaces[0].data[(124 + sectors) * 512], 0x00);
  }
}

TEST_F(NvmeFixture, AControllerTheFirmwareLeftEnabledIsResetFirst) {
  add_namespace(64);
  nvme.enabled_by_firmware();
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller) << controller.error().message;
  EXPECT_FALSE(nvme.queue_set_while_enabled)
      << "AQA/ASQ/ACQ may only change while the controller is disabled";
}

TEST_F(NvmeFixture, AControllerThatNeverBecomesReadyTimesOut) {
  nvme.never_ready = true;
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_FALSE(controller);
  EXPECT_STREQ(controller.error().message, "nvme: the controller did not become ready (CSTS.RDY stays 0)");
  EXPECT_GE(clock.ms(), 1000u) << "CAP.TO (1 s) is waited for";
  EXPECT_EQ(nvme.admin_commands, 0);
}

TEST_F(NvmeFixture, AFatalControllerIsReported) {
  nvme.fatal = true;
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_FALSE(controller);
  EXPECT_STREQ(controller.error().message, "nvme: the controller reports a fatal status (CSTS.CFS)");
}

TEST_F(NvmeFixture, AFailedCommandNamesItsStatus) {
  add_namespace(64);
  nvme.fail_opcode = 0x01;
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(512, 1);
  auto wrote = disk->write(0, 1, data.data());
  ASSERT_FALSE(wrote);
  EXPECT_STREQ(wrote.error().message, "nvme: WRITE failed: status code type 0, status code 0x06");
  std::vector<uint8_t> back(512);
  EXPECT_TRUE(disk->read(0, 1, back.data())) << "the queue pair still works";
}

// Formats the driver does not handle are refused by name: metadata (extended LBA or a separate buffer) and
// protection information. QEMU: -device nvme-ns,...,ms=8,mset=1 (extended), ms=8 (separate), pi=1.
TEST_F(NvmeFixture, NamespacesWithMetadataOrProtectionInformationAreRefused) {
  add_namespace(64);
  nvme.namespaces[0].metadata_bytes = 8;
  nvme.namespaces[0].extended_lba = true;
  add_namespace(64);
  nvme.namespaces[1].metadata_bytes = 16;
  add_namespace(64);
  nvme.namespaces[2].metadata_bytes = 8;
  nvme.namespaces[2].protection = 1;
  add_namespace(64);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto extended = NvmeDisk::open(*controller, 1);
  ASSERT_FALSE(extended);
  EXPECT_STREQ(extended.error().message,
               "nvme: the namespace's format has 8 bytes of metadata per block (extended LBA); a trace disk "
               "needs a format without metadata");
  auto separate = NvmeDisk::open(*controller, 2);
  ASSERT_FALSE(separate);
  EXPECT_STREQ(separate.error().message,
               "nvme: the namespace's format has 16 bytes of metadata per block (separate buffer); a trace "
               "disk needs a format without metadata");
  auto protection = NvmeDisk::open(*controller, 3);
  ASSERT_FALSE(protection);
  EXPECT_STREQ(protection.error().message,
               "nvme: the namespace's format has protection information (type 1); a trace disk needs a "
               "format without it");
  EXPECT_TRUE(NvmeDisk::open(*controller, 4)) << "the plain format";
}

TEST_F(NvmeFixture, NamespacesWithUnsupportedBlockSizesOrInactiveAreRefused) {
  add_namespace(64, 8192);
  nvme.active_list_unknown = true;  // an NVMe 1.0 controller: every namespace up to NN is tried
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  uint32_t nsids[4];
  auto count = controller->active_namespaces(nsids, 4);
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 4u) << "1..4 of the 256 the controller has";
  auto big = NvmeDisk::open(*controller, 1);
  ASSERT_FALSE(big);
  EXPECT_STREQ(big.error().message,
               "nvme: the namespace has 8192-byte blocks; a trace disk needs 512-, 1024-, 2048- or 4096-byte "
               "blocks");
  auto inactive = NvmeDisk::open(*controller, 2);
  ASSERT_FALSE(inactive);
  EXPECT_STREQ(inactive.error().message, "nvme: the namespace is not active");
}

// A 4Kn namespace (LBAF data size 2^12) and an odd 1024-byte one: addressed in 512-byte sectors, the
// commands carry blocks, and a transfer that is not whole blocks is refused before it reaches the drive.
TEST_F(NvmeFixture, NamespacesOfLargerBlocksAreAddressedInSectors) {
  for (const uint32_t block : {4096u, 1024u}) {
    nvme.namespaces.clear();
    nvme.writes.clear();
    add_namespace(256, block);
    auto controller = NvmeController::open(nvme, clock, area);
    ASSERT_TRUE(controller) << controller.error().message;
    auto disk = NvmeDisk::open(*controller, 1);
    ASSERT_TRUE(disk) << disk.error().message;
    const uint32_t per = block / 512;
    EXPECT_EQ(disk->block_size(), block);
    EXPECT_EQ(disk->sectors_per_block(), per);
    EXPECT_EQ(disk->sector_count(), 256u * per) << "512-byte sectors";

    std::vector<uint8_t> data(3 * block);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 11 + block);
    ASSERT_TRUE(disk->write(5 * per, 3 * per, data.data()));
    ASSERT_EQ(nvme.writes.size(), 1u);
    EXPECT_EQ(nvme.writes[0], (std::pair<uint64_t, uint32_t>{5, 3})) << "LBA and count in blocks";
    EXPECT_TRUE(std::equal(data.begin(), data.end(), nvme.namespaces[0].data.begin() + 5 * block));
    std::vector<uint8_t> back(data.size());
    ASSERT_TRUE(disk->read(5 * per, 3 * per, back.data()));
    EXPECT_EQ(back, data);

    // Staged writes: the same conversion.
    std::memset(disk->staging(1), 0x5A, 2 * block);
    ASSERT_TRUE(disk->start_write(10 * per, 2 * per, 1));
    ASSERT_TRUE(disk->finish_write());
    EXPECT_EQ(nvme.writes.back(), (std::pair<uint64_t, uint32_t>{10, 2}));
    EXPECT_EQ(nvme.namespaces[0].data[10 * block + 2 * block - 1], 0x5A);

    const size_t writes = nvme.writes.size();
    for (const auto& [lba, count] : {std::pair<uint64_t, uint32_t>{1, per}, {0, 1}}) {
      auto partial = disk->write(lba, count, data.data());
      ASSERT_FALSE(partial) << lba << "+" << count;
      EXPECT_STREQ(partial.error().message,
                   "a transfer that is not whole logical blocks (the trace disk writes only whole blocks)");
      EXPECT_FALSE(disk->read(lba, count, back.data()));
      EXPECT_FALSE(disk->start_write(lba, count, 0));
    }
    EXPECT_EQ(nvme.writes.size(), writes) << "nothing reached the drive";
  }
}

// A controller that was only searched: shut down cleanly (no unsafe shutdown on the drive's count), then
// disabled, so that it no longer reads the DMA area the next controller gets.
TEST_F(NvmeFixture, CloseShutsTheControllerDownCleanlyAndDisablesIt) {
  add_namespace(8);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  ASSERT_TRUE(controller->close());
  EXPECT_EQ(nvme.read32(0x1C) & 1, 0u);
  EXPECT_FALSE(nvme.enabled());
  EXPECT_EQ(nvme.shutdowns, 1);
  EXPECT_EQ(nvme.unsafe_shutdowns, 0);
}

// The firmware's controller (the PC's own system SSD, say) is told before it is reset for our queues.
TEST_F(NvmeFixture, AControllerTheFirmwareLeftRunningIsShutDownBeforeTheReset) {
  add_namespace(8);
  nvme.enabled_by_firmware();
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller) << controller.error().message;
  ASSERT_TRUE(controller->close());
  EXPECT_EQ(nvme.shutdowns, 2) << "the firmware's session and ours";
  EXPECT_EQ(nvme.unsafe_shutdowns, 0);
}

// The trace disk's controller after the last flush: a shutdown notification, then disabled; the next command
// brings it up again (a second save from the analysis stage).
TEST_F(NvmeFixture, ShutDownNotifiesTheControllerAndTheNextCommandBringsItBack) {
  add_namespace(64);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(512, 0x42);
  ASSERT_TRUE(disk->write(3, 1, data.data()));
  ASSERT_TRUE(disk->flush());
  ASSERT_TRUE(disk->shut_down());
  EXPECT_EQ(nvme.shutdowns, 1);
  EXPECT_EQ(nvme.unsafe_shutdowns, 0);
  EXPECT_FALSE(nvme.enabled());
  EXPECT_FALSE(controller->running());
  data[0] = 0x43;
  ASSERT_TRUE(disk->write(4, 1, data.data()));
  EXPECT_EQ(nvme.enables, 2);
  EXPECT_EQ(nvme.namespaces[0].data[3 * 512], 0x42);
  EXPECT_EQ(nvme.namespaces[0].data[4 * 512], 0x43);
  EXPECT_EQ(nvme.doorbells_while_off, 0);
}

// A step after CC.EN=1 fails: the controller is disabled again before open() returns.
TEST_F(NvmeFixture, AFailedStepAfterEnableLeavesTheControllerDisabled) {
  for (uint8_t opcode : {uint8_t{0x06}, uint8_t{0x05}, uint8_t{0x01}}) {  // IDENTIFY, CREATE CQ, CREATE SQ
    NvmeModel model(memory);
    model.fail_admin_opcode = opcode;
    auto controller = NvmeController::open(model, clock, area);
    ASSERT_FALSE(controller) << int{opcode};
    EXPECT_FALSE(model.enabled()) << int{opcode};
    EXPECT_EQ(model.read32(0x1C) & 1, 0u) << int{opcode};
  }
  NvmeModel fatal(memory);
  fatal.fatal = true;
  EXPECT_FALSE(NvmeController::open(fatal, clock, area));
  EXPECT_FALSE(fatal.enabled()) << "a fatal controller is disabled too";
  NvmeModel never(memory);
  never.never_ready = true;
  EXPECT_FALSE(NvmeController::open(never, clock, area));
  EXPECT_FALSE(never.enabled());
}

// A command that never completes: the controller is disabled, which aborts it (no DMA after the timeout);
// the next command brings the controller up again.
TEST_F(NvmeFixture, ATimeoutStopsTheController) {
  add_namespace(64);
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(512, 1);
  nvme.io_hangs = true;
  auto wrote = disk->write(0, 1, data.data());
  ASSERT_FALSE(wrote);
  EXPECT_STREQ(wrote.error().message, "nvme: timed out waiting for the completion of WRITE");
  EXPECT_FALSE(nvme.enabled());
  // The staged path: writes in flight when the queue fills up, and when finish_write() waits.
  ASSERT_TRUE(disk->start_write(0, 8, 0));
  EXPECT_TRUE(nvme.enabled());
  EXPECT_FALSE(disk->finish_write());
  EXPECT_FALSE(nvme.enabled());
  EXPECT_TRUE(disk->finish_write()) << "nothing is outstanding any more";
  nvme.io_hangs = false;
  ASSERT_TRUE(disk->write(0, 1, data.data()));
  EXPECT_EQ(nvme.namespaces[0].data[0], 1);
}

// A completion whose command identifier is not one we issued is not taken as ours: the write fails and the
// controller is stopped (our commands' state is unknown).
TEST_F(NvmeFixture, ACompletionWithAnotherCommandIdentifierIsNotOurs) {
  add_namespace(4096);
  nvme.mdts = 1;  // 8 KiB per command: a staging write is many commands
  auto controller = NvmeController::open(nvme, clock, area);
  ASSERT_TRUE(controller);
  auto disk = NvmeDisk::open(*controller, 1);
  ASSERT_TRUE(disk);
  std::vector<uint8_t> data(512, 1);
  nvme.stranger_completion = true;
  auto wrote = disk->write(0, 1, data.data());
  ASSERT_FALSE(wrote);
  EXPECT_NE(std::string(wrote.error().message).find("which is not outstanding"), std::string::npos)
      << wrote.error().message;
  EXPECT_FALSE(nvme.enabled());

  ASSERT_TRUE(disk->start_write(0, 64, 0));  // 4 commands
  ASSERT_TRUE(disk->finish_write()) << "each completion matched to its command";
  nvme.stranger_completion = true;
  ASSERT_TRUE(disk->start_write(0, 64, 0));
  auto finished = disk->finish_write();
  ASSERT_FALSE(finished) << "a staged write's stranger completion";
  EXPECT_FALSE(nvme.enabled());
}

}  // namespace
}  // namespace ett::test
