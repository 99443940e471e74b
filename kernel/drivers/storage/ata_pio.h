// ata_pio.h: one IDE disk (legacy channel ports, or a native-mode PCI channel's BARs) through programmed I/O:
// IDENTIFY, read, write, flush. Polled, no IRQs;
// every wait has a TSC deadline and fails with a message naming what timed out. Writes move up to 16 sectors
// per data request (WRITE MULTIPLE) when the drive supports it: under QEMU each data request costs one
// round trip to the image file, so this is what sets the dump rate.
#pragma once

#include <stdint.h>

#include "arch/x86/io.h"
#include "drivers/storage/block_device.h"
#include "drivers/storage/storage_pci.h"
#include "ett/result.h"

namespace ett::drivers::storage {

class AtaPio : public BlockDevice {
 public:
  // The four legacy IDE positions, in the order the kernel searches them for a trace disk.
  enum class Position : uint8_t { PrimaryMaster, PrimarySlave, SecondaryMaster, SecondarySlave };
  static constexpr uint32_t kPositionCount = 4;
  static const char* position_name(Position position);

  // IDENTIFYs the disk at `position` (primary: command block 0x1F0, control 0x3F6; secondary: 0x170,
  // 0x376). Sends nothing but drive select and IDENTIFY: a disk is only read until its label is checked.
  // `tsc_hz` sets the deadlines.
  static Result<AtaPio> open(Position position, uint64_t tsc_hz);
  // The same for a channel at other ports (a native-mode PCI IDE controller's BARs).
  static Result<AtaPio> open(const IdeChannelPorts& channel, bool slave, uint64_t tsc_hz);

  // SET MULTIPLE MODE (up to 16 sectors per data request). Changes the drive's settings, so the caller
  // does it only once the disk is known to be a trace disk; until then writes go one sector per request.
  void enable_multiple_mode();
  void prepare_for_writing() override { enable_multiple_mode(); }

  // `count` 512-byte sectors (whole logical sectors; split into commands of at most 256 logical sectors)
  // at `lba`.
  Status read(uint64_t lba, uint32_t count, void* buffer) override;
  Status write(uint64_t lba, uint32_t count, const void* data) override;
  // FLUSH CACHE: everything written so far is on the medium (or in the image file) when this returns.
  Status flush_cache();
  Status flush() override { return flush_cache(); }

  uint64_t sector_count() const override { return m_sector_count; }
  uint32_t block_size() const override { return kSectorSize << m_shift; }
  bool has_lba48() const { return m_lba48; }
  // Logical sectors per data request of a write.
  uint32_t sectors_per_write_block() const { return m_block_sectors; }
  const char* model() const override { return m_model; }

 private:
  enum CommandReg : uint8_t {
    kData = 0,
    kError = 1,
    kSectorCount = 2,
    kLbaLow = 3,
    kLbaMid = 4,
    kLbaHigh = 5,
    kDriveSelect = 6,
    kStatus = 7,   // read
    kCommand = 7,  // write
  };
  enum ControlReg : uint8_t {
    kAltStatus = 0,      // read: status without side effects
    kDeviceControl = 0,  // write
  };
  enum StatusBit : uint8_t {
    kErr = 1u << 0,
    kDrq = 1u << 3,
    kDf = 1u << 5,  // device fault
    kDrdy = 1u << 6,
    kBsy = 1u << 7,
  };
  enum DriveSelectBit : uint8_t {
    kSelectMaster = 0xA0,  // bits 7 and 5 are obsolete but set by convention
    kSelectSlave = 0xB0,   // the same with DEV (bit 4) set
    kSelectLba = 1u << 6,
  };
  enum DeviceControlBit : uint8_t {
    kInterruptDisable = 1u << 1,  // nIEN
  };
  enum Command : uint8_t {
    kReadSectors = 0x20,
    kReadSectorsExt = 0x24,
    kWriteSectors = 0x30,
    kWriteSectorsExt = 0x34,
    kWriteMultipleExt = 0x39,
    kWriteMultiple = 0xC5,
    kSetMultipleMode = 0xC6,
    kFlushCache = 0xE7,
    kIdentify = 0xEC,
  };
  static constexpr uint16_t kPrimaryCommandBase = 0x1F0;
  static constexpr uint16_t kPrimaryControlBase = 0x3F6;
  static constexpr uint16_t kSecondaryCommandBase = 0x170;
  static constexpr uint16_t kSecondaryControlBase = 0x376;
  static constexpr uint64_t kLba28Limit = 1ull << 28;
  static constexpr uint32_t kMaxBlockSectors = 16;

  // The messages one operation fails with.
  struct Op {
    const char* busy_timeout;
    const char* drq_timeout;
    const char* device_error;
  };
  static const Op kIdentifyOp;
  static const Op kReadOp;
  static const Op kWriteOp;
  static const Op kFlushOp;
  static const Op kSetMultipleOp;

  AtaPio(uint16_t command_base, uint16_t control_base, bool slave, uint64_t tsc_hz);
  Status identify();
  void delay_400ns() const;
  uint64_t deadline_after_ms(uint32_t ms) const;
  // Waits for BSY to clear and returns the status (before a command; ERR may be left from the last one).
  Result<uint8_t> wait_not_busy(const Op& op, uint32_t timeout_ms) const;
  // Waits for BSY to clear after a command, and fails if the drive set ERR or DF.
  Status wait_complete(const Op& op, uint32_t timeout_ms) const;
  Status wait_data_request(const Op& op, uint32_t timeout_ms) const;
  Status issue(const Op& op, uint64_t lba, uint32_t count, Command lba28_command, Command lba48_command);

  x86::IoWindow m_command_block;
  x86::IoWindow m_control_block;
  uint8_t m_select;  // kSelectMaster or kSelectSlave
  uint64_t m_tsc_hz;
  uint16_t m_max_multiple = 0;  // IDENTIFY word 47
  uint64_t m_sector_count = 0;  // 512-byte sectors
  uint32_t m_shift = 0;         // log2 of the 512-byte sectors per logical sector (IDENTIFY words 106, 117)
  bool m_lba48 = false;
  uint32_t m_block_sectors = 1;  // logical sectors per data request of a write: > 1 in multiple mode
  char m_model[41] = {};
};

}  // namespace ett::drivers::storage
