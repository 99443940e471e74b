// ata_pio.cpp: PIO data transfers with one IDE disk, one DRQ block (1 to 16 logical sectors of 512 to 4096
// bytes) at a time.
#include "drivers/storage/ata_pio.h"

#include "arch/x86/cpu.h"
#include "drivers/storage/ata_identify.h"
#include "lib/format.h"
#include "lib/tsc_math.h"

namespace ett::drivers::storage {

namespace {
constexpr uint32_t kIdentifyTimeoutMs = 2'000;
constexpr uint32_t kTransferTimeoutMs = 10'000;  // a real disk may have to spin up first
constexpr uint32_t kFlushTimeoutMs = 30'000;
constexpr uint32_t kWordsPerSector = AtaPio::kSectorSize / 2;
}  // namespace

const AtaPio::Op AtaPio::kIdentifyOp{"ata: timed out waiting for BSY to clear after IDENTIFY",
                                     "ata: timed out waiting for DRQ (IDENTIFY data)",
                                     "ata: the drive aborted IDENTIFY (ERR): not an ATA disk"};
const AtaPio::Op AtaPio::kReadOp{"ata: timed out waiting for BSY to clear during READ SECTORS",
                                 "ata: timed out waiting for DRQ during READ SECTORS",
                                 "ata: READ SECTORS failed (ERR or DF set)"};
const AtaPio::Op AtaPio::kWriteOp{"ata: timed out waiting for BSY to clear during WRITE SECTORS",
                                  "ata: timed out waiting for DRQ during WRITE SECTORS",
                                  "ata: WRITE SECTORS failed (ERR or DF set)"};
const AtaPio::Op AtaPio::kSetMultipleOp{"ata: timed out waiting for BSY to clear after SET MULTIPLE MODE",
                                        nullptr, "ata: SET MULTIPLE MODE was refused"};
const AtaPio::Op AtaPio::kFlushOp{"ata: timed out waiting for BSY to clear after FLUSH CACHE", nullptr,
                                  "ata: FLUSH CACHE failed (ERR or DF set)"};

const char* AtaPio::position_name(Position position) {
  switch (position) {
    case Position::PrimaryMaster:
      return "primary master";
    case Position::PrimarySlave:
      return "primary slave";
    case Position::SecondaryMaster:
      return "secondary master";
    case Position::SecondarySlave:
      return "secondary slave";
  }
  return "?";
}

AtaPio::AtaPio(uint16_t command_base, uint16_t control_base, bool slave, uint64_t tsc_hz)
    : m_command_block(command_base),
      m_control_block(control_base),
      m_select(slave ? kSelectSlave : kSelectMaster),
      m_tsc_hz(tsc_hz) {}

Result<AtaPio> AtaPio::open(Position position, uint64_t tsc_hz) {
  const bool primary = position <= Position::PrimarySlave;
  const bool slave = position == Position::PrimarySlave || position == Position::SecondarySlave;
  return open(IdeChannelPorts{primary ? kPrimaryCommandBase : kSecondaryCommandBase,
                              primary ? kPrimaryControlBase : kSecondaryControlBase, false},
              slave, tsc_hz);
}

Result<AtaPio> AtaPio::open(const IdeChannelPorts& channel, bool slave, uint64_t tsc_hz) {
  AtaPio ata(channel.command, channel.control, slave, tsc_hz);
  ETT_TRY(ata.identify());
  return ata;
}

void AtaPio::delay_400ns() const {
  // Each ISA-speed port read takes at least 100 ns: four give the drive time to update its status.
  for (int i = 0; i < 4; ++i) m_control_block.in8(kAltStatus);
}

uint64_t AtaPio::deadline_after_ms(uint32_t ms) const {
  return x86::rdtsc() + lib::ticks_for_ms(ms, m_tsc_hz);
}

Result<uint8_t> AtaPio::wait_not_busy(const Op& op, uint32_t timeout_ms) const {
  const uint64_t deadline = deadline_after_ms(timeout_ms);
  for (;;) {
    const uint8_t status = m_command_block.in8(kStatus);
    if (!(status & kBsy)) return status;
    if (x86::rdtsc() > deadline) return fail(op.busy_timeout);
    x86::pause();
  }
}

Status AtaPio::wait_complete(const Op& op, uint32_t timeout_ms) const {
  ETT_TRY_ASSIGN(const uint8_t status, wait_not_busy(op, timeout_ms));
  if (status & (kErr | kDf)) return fail(op.device_error);
  return {};
}

Status AtaPio::wait_data_request(const Op& op, uint32_t timeout_ms) const {
  const uint64_t deadline = deadline_after_ms(timeout_ms);
  for (;;) {
    const uint8_t status = m_command_block.in8(kStatus);
    if (!(status & kBsy)) {
      if (status & (kErr | kDf)) return fail(op.device_error);
      if (status & kDrq) return {};
    }
    if (x86::rdtsc() > deadline) return fail((status & kBsy) ? op.busy_timeout : op.drq_timeout);
    x86::pause();
  }
}

Status AtaPio::identify() {
  m_control_block.out8(kDeviceControl, kInterruptDisable);
  m_command_block.out8(kDriveSelect, m_select);
  delay_400ns();
  const uint8_t selected = m_command_block.in8(kStatus);
  // A channel with no drive floats at 0xFF; a missing slave next to a master reads 0.
  if (selected == 0xFF || selected == 0) return fail("ata: no drive");
  m_command_block.out8(kSectorCount, 0);
  m_command_block.out8(kLbaLow, 0);
  m_command_block.out8(kLbaMid, 0);
  m_command_block.out8(kLbaHigh, 0);
  m_command_block.out8(kCommand, kIdentify);
  delay_400ns();
  if (m_command_block.in8(kStatus) == 0) return fail("ata: no drive");
  ETT_TRY(wait_not_busy(kIdentifyOp, kIdentifyTimeoutMs));
  if (m_command_block.in8(kLbaMid) != 0 || m_command_block.in8(kLbaHigh) != 0)
    return fail("ata: not an ATA disk (ATAPI or SATA signature)");
  ETT_TRY(wait_data_request(kIdentifyOp, kIdentifyTimeoutMs));

  uint16_t words[kWordsPerSector];
  m_command_block.rep_in16(kData, words, kWordsPerSector);

  const IdentifyData id = parse_identify(words);
  __builtin_memcpy(m_model, id.model, sizeof(m_model));
  m_lba48 = id.lba48;
  if (id.sectors == 0) return fail("ata: the disk reports no LBA sectors (CHS-only disk)");
  if (!supported_block_size(id.logical_sector_bytes)) {
    static char message[160];
    lib::format(message, sizeof(message), kLogicalSectorRefusal, "ata", id.logical_sector_bytes);
    return fail(message);
  }
  m_shift = block_shift(id.logical_sector_bytes);
  m_sector_count = id.sectors << m_shift;
  m_max_multiple = id.max_multiple;
  return {};
}

// Without multiple mode (none offered, or refused) writes go one sector per data request.
void AtaPio::enable_multiple_mode() {
  uint32_t block = 1;
  while (block * 2 <= m_max_multiple && block * 2 <= kMaxBlockSectors) block *= 2;
  if (block == 1 || block == m_block_sectors) return;
  if (!wait_not_busy(kSetMultipleOp, kIdentifyTimeoutMs)) return;
  m_command_block.out8(kDriveSelect, m_select);
  delay_400ns();
  m_command_block.out8(kSectorCount, static_cast<uint8_t>(block));
  m_command_block.out8(kCommand, kSetMultipleMode);
  delay_400ns();
  if (wait_complete(kSetMultipleOp, kIdentifyTimeoutMs)) m_block_sectors = block;
}

Status AtaPio::issue(const Op& op, uint64_t lba, uint32_t count, Command lba28_command,
                     Command lba48_command) {
  ETT_TRY(wait_not_busy(op, kTransferTimeoutMs));
  if (lba + count <= kLba28Limit && count <= 256) {
    m_command_block.out8(kDriveSelect, static_cast<uint8_t>(m_select | kSelectLba | ((lba >> 24) & 0x0F)));
    delay_400ns();
    m_command_block.out8(kSectorCount, static_cast<uint8_t>(count));  // 0 means 256
    m_command_block.out8(kLbaLow, static_cast<uint8_t>(lba));
    m_command_block.out8(kLbaMid, static_cast<uint8_t>(lba >> 8));
    m_command_block.out8(kLbaHigh, static_cast<uint8_t>(lba >> 16));
    m_command_block.out8(kCommand, lba28_command);
  } else {
    if (!m_lba48) return fail("ata: the sectors lie beyond LBA28 and the drive has no LBA48");
    m_command_block.out8(kDriveSelect, static_cast<uint8_t>(m_select | kSelectLba));
    delay_400ns();
    // Each register is a two-deep FIFO: the high-order bytes go first.
    m_command_block.out8(kSectorCount, static_cast<uint8_t>(count >> 8));
    m_command_block.out8(kLbaLow, static_cast<uint8_t>(lba >> 24));
    m_command_block.out8(kLbaMid, static_cast<uint8_t>(lba >> 32));
    m_command_block.out8(kLbaHigh, static_cast<uint8_t>(lba >> 40));
    m_command_block.out8(kSectorCount, static_cast<uint8_t>(count));
    m_command_block.out8(kLbaLow, static_cast<uint8_t>(lba));
    m_command_block.out8(kLbaMid, static_cast<uint8_t>(lba >> 8));
    m_command_block.out8(kLbaHigh, static_cast<uint8_t>(lba >> 16));
    m_command_block.out8(kCommand, lba48_command);
  }
  delay_400ns();
  return {};
}

// `lba` and `count` are 512-byte sectors; the commands count logical sectors (2^m_shift of them).
Status AtaPio::read(uint64_t lba, uint32_t count, void* buffer) {
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  auto* out = static_cast<uint8_t*>(buffer);
  const uint32_t words = kWordsPerSector << m_shift;
  lba >>= m_shift;
  count >>= m_shift;
  while (count > 0) {
    const uint32_t batch = count < 256 ? count : 256;
    ETT_TRY(issue(kReadOp, lba, batch, kReadSectors, kReadSectorsExt));
    for (uint32_t i = 0; i < batch; ++i, out += 2 * words) {
      ETT_TRY(wait_data_request(kReadOp, kTransferTimeoutMs));
      m_command_block.rep_in16(kData, out, words);
    }
    lba += batch;
    count -= batch;
  }
  return {};
}

Status AtaPio::write(uint64_t lba, uint32_t count, const void* data) {
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  const auto* in = static_cast<const uint8_t*>(data);
  const uint32_t words = kWordsPerSector << m_shift;
  lba >>= m_shift;
  count >>= m_shift;
  while (count > 0) {
    const uint32_t batch = count < 256 ? count : 256;
    const bool multiple = m_block_sectors > 1;
    ETT_TRY(issue(kWriteOp, lba, batch, multiple ? kWriteMultiple : kWriteSectors,
                  multiple ? kWriteMultipleExt : kWriteSectorsExt));
    for (uint32_t done = 0; done < batch;) {
      const uint32_t block = batch - done < m_block_sectors ? batch - done : m_block_sectors;
      ETT_TRY(wait_data_request(kWriteOp, kTransferTimeoutMs));
      m_command_block.rep_out16(kData, in, block * words);
      in += block * 2 * words;
      done += block;
    }
    delay_400ns();
    ETT_TRY(wait_complete(kWriteOp, kTransferTimeoutMs));
    lba += batch;
    count -= batch;
  }
  return {};
}

Status AtaPio::flush_cache() {
  ETT_TRY(wait_not_busy(kFlushOp, kTransferTimeoutMs));
  m_command_block.out8(kDriveSelect, m_select);  // the other drive of the channel may have been selected
  delay_400ns();
  m_command_block.out8(kCommand, kFlushCache);
  delay_400ns();
  return wait_complete(kFlushOp, kFlushTimeoutMs);
}

}  // namespace ett::drivers::storage
