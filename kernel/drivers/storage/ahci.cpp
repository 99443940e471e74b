// ahci.cpp: the AHCI HBA and one SATA disk, polled through command slot 0 with one PRDT entry.
#include "drivers/storage/ahci.h"

#include "drivers/storage/ata_identify.h"
#include "lib/format.h"

namespace ett::drivers::storage {

namespace {
constexpr uint32_t kHandoffMs = 25;         // AHCI 1.3.1 10.6.3: the firmware clears BOS within 25 ms...
constexpr uint32_t kHandoffBusyMs = 2'000;  // ...or, when it says it is busy (BB), within 2 s
constexpr uint32_t kPresenceMs = 10;        // a device shows (PxSSTS.DET 1) within 10 ms of COMRESET...
constexpr uint32_t kLinkMs = 100;           // ...and its link is up (DET 3) well within 100 ms
constexpr uint32_t kComresetMs = 1;         // AHCI 1.3.1 10.4.2: DET=1 held at least 1 ms
constexpr uint32_t kStopMs = 500;           // CR and FR clear within 500 ms of ST or FRE clearing
constexpr uint32_t kDeviceReadyMs = 2'000;  // BSY and DRQ clear after the port starts
constexpr uint32_t kResetReadyMs = 10'000;  // after a COMRESET a real disk may have to spin up again
constexpr uint32_t kIdentifyMs = 2'000;
constexpr uint32_t kTransferMs = 10'000;  // a real disk may have to spin up first
constexpr uint32_t kFlushMs = 30'000;
constexpr uint32_t kMaxSectors = AhciDisk::kDataBytes / BlockDevice::kSectorSize;
}  // namespace

// --- the HBA ---------------------------------------------------------------------------------------------

Result<AhciController> AhciController::open(RegisterWindow& abar, Clock& clock) {
  AhciController hba(abar, clock);
  // AHCI mode first: on a controller that also offers legacy mode, the other registers mean nothing until
  // then.
  abar.write32(kGhc, (abar.read32(kGhc) | kGhcAhciEnable) & ~kGhcInterruptEnable);
  if (!(abar.read32(kGhc) & kGhcAhciEnable))
    return fail("ahci: the controller stays in legacy mode (GHC.AE)");
  hba.take_from_firmware();
  abar.write32(
      kGhc, (abar.read32(kGhc) | kGhcAhciEnable) & ~kGhcInterruptEnable);  // the firmware may have changed it
  hba.m_cap = abar.read32(kCap);
  hba.m_ports_implemented = abar.read32(kPi);
  if (hba.m_ports_implemented == 0) return fail("ahci: the controller implements no ports (PI = 0)");
  return hba;
}

// BIOS/OS handoff (AHCI 1.3.1 10.6.3): the firmware may still be using the HBA (for its own disk services
// or SMM); asking for it and waiting keeps the two from driving the same ports. Firmware that does not let
// go in time is not waited for any longer: the kernel carries on, as FreeBSD does, since refusing the
// controller would leave the trace disk unfound for a firmware bug.
void AhciController::take_from_firmware() {
  if (!(m_abar->read32(kCap2) & kCap2BiosHandoff)) return;
  if (!(m_abar->read32(kBohc) & kBohcBiosOwned)) return;
  m_took_over = true;
  // OOC (bit 3) is write-1-to-clear: written back as 0.
  m_abar->write32(kBohc, (m_abar->read32(kBohc) & (kBohcBiosOwned | kBohcBiosBusy)) | kBohcOsOwned);
  const auto released = [this] { return !(m_abar->read32(kBohc) & kBohcBiosOwned); };
  if (!wait_until(*m_clock, kHandoffMs, "", released) && (m_abar->read32(kBohc) & kBohcBiosBusy))
    (void)wait_until(*m_clock, kHandoffBusyMs, "",
                     [this] { return !(m_abar->read32(kBohc) & (kBohcBiosOwned | kBohcBiosBusy)); });
  m_firmware_kept = !released();
}

uint32_t AhciController::port_count() const {
  uint32_t count = 0;
  for (uint32_t bits = m_ports_implemented; bits; bits &= bits - 1) ++count;
  return count;
}

AhciController::Link AhciController::link(uint32_t port) {
  switch (m_abar->read32(port_reg(port, kPxSsts)) & kSstsDetMask) {
    case kSstsDetPresent:
      return Link::Up;
    case kSstsDetNoPhy:
      return Link::Offline;
    default:
      return Link::NoDevice;
  }
}

AhciController::Link AhciController::wait_for_link(uint32_t port) {
  const uint32_t ssts = port_reg(port, kPxSsts);
  if (!wait_until(*m_clock, kPresenceMs, "", [&] { return (m_abar->read32(ssts) & kSstsDetMask) != 0; }))
    return link(port);
  (void)wait_until(*m_clock, kLinkMs - kPresenceMs, "", [&] { return link(port) == Link::Up; });
  return link(port);
}

void AhciController::spin_up_ports() {
  for (uint32_t port = 0; port < kMaxPorts; ++port) {
    if (!(m_ports_implemented & (1u << port))) continue;
    if (m_cap & kCapStaggeredSpinUp) {
      const uint32_t cmd = m_abar->read32(port_reg(port, kPxCmd));
      if (!(cmd & kCmdSpinUp)) {
        m_abar->write32(port_reg(port, kPxCmd), cmd | kCmdSpinUp | kCmdPowerOn);
        // The next port spins up once this one's device has shown and linked, or is not there.
        (void)wait_for_link(port);
      }
    }
    if (link(port) == Link::Offline) (void)reset_port(port);
  }
}

Status AhciController::reset_port(uint32_t port) {
  RegisterWindow& abar = *m_abar;
  const uint32_t sctl = port_reg(port, kPxSctl);
  if (abar.read32(port_reg(port, kPxCmd)) & (kCmdStart | kCmdListRunning))
    return fail("ahci: COMRESET refused: the port's command list runs (PxCMD.ST or CR set)");
  const uint32_t kept = abar.read32(sctl) & ~(kSctlDetMask | kSctlNoPartialSlumber);
  abar.write32(sctl, kept | kSctlNoPartialSlumber | kSctlDetComreset);
  const uint64_t held = m_clock->deadline_after_ms(kComresetMs);
  while (m_clock->now() <= held) m_clock->relax();
  abar.write32(sctl, kept | kSctlNoPartialSlumber);
  if (wait_for_link(port) != Link::Up)
    return fail("ahci: no link after COMRESET (PxSSTS.DET is not 3 within 100 ms)");
  abar.write32(port_reg(port, kPxSerr), 0xFFFFFFFF);  // write-1-to-clear: DIAG.X and the link's changes
  return {};
}

Status AhciController::stop_port(uint32_t port) {
  RegisterWindow& abar = *m_abar;
  const uint32_t cmd_reg = port_reg(port, kPxCmd);
  uint32_t cmd = abar.read32(cmd_reg);
  if (cmd & kCmdStart) abar.write32(cmd_reg, cmd & ~kCmdStart);
  ETT_TRY(wait_until(*m_clock, kStopMs, "ahci: the port's command list did not stop (PxCMD.CR stays set)",
                     [&] { return !(abar.read32(cmd_reg) & kCmdListRunning); }));
  cmd = abar.read32(cmd_reg);
  if (cmd & kCmdFisReceive) abar.write32(cmd_reg, cmd & ~kCmdFisReceive);
  return wait_until(*m_clock, kStopMs, "ahci: the port's FIS receive did not stop (PxCMD.FR stays set)",
                    [&] { return !(abar.read32(cmd_reg) & kCmdFisRunning); });
}

// --- one disk ---------------------------------------------------------------------------------------------

Result<AhciDisk> AhciDisk::open(AhciController& hba, uint32_t port, const DmaArea& area, Kind* kind) {
  if (area.size < kDmaBytes || (area.phys & 0xFFF) != 0)
    return fail("ahci: the DMA area is too small or not 4 KiB aligned");
  if (area.phys + area.size > (uint64_t{1} << 32) && !(hba.m_cap & Hba::kCap64Bit))
    return fail("ahci: the DMA area lies above 4 GiB and the controller has 32-bit addresses only");
  AhciDisk disk(hba, port, area);
  ETT_TRY(disk.start());
  const uint32_t signature = hba.m_abar->read32(disk.reg(Hba::kPxSig));
  Kind found = Kind::Disk;
  if (signature == kSignatureAtapi)
    found = Kind::Atapi;
  else if (signature == kSignaturePortMultiplier)
    found = Kind::PortMultiplier;
  else if (signature != kSignatureAta && signature != 0xFFFFFFFF)
    found = Kind::Other;
  if (kind) *kind = found;
  if (found != Kind::Disk) {
    (void)disk.close();
    switch (found) {
      case Kind::Atapi:
        return fail("ahci: an ATAPI device (CD/DVD), not a disk");
      case Kind::PortMultiplier:
        return fail("ahci: a port multiplier (not supported)");
      default:
        return fail("ahci: a device that is not an ATA disk (signature)");
    }
  }
  if (const Status identified = disk.identify(); !identified) {
    (void)disk.close();
    return identified.failure();
  }
  return disk;
}

Status AhciDisk::start() {
  ETT_TRY(m_hba.stop_port(m_port));
  const Status started = start_stopped_port();
  if (!started) (void)m_hba.stop_port(m_port);  // neither the command list nor FIS receive keeps running
  return started;
}

// A device still busy (BSY or DRQ) when its port is taken over, or a port with errors recorded (PxSERR.ERR),
// is in a state the firmware or an earlier failure left: only a COMRESET brings it back to a known one.
bool AhciDisk::needs_reset() {
  RegisterWindow& abar = *m_hba.m_abar;
  return (abar.read32(reg(Hba::kPxTfd)) & (Hba::kTfdBsy | Hba::kTfdDrq)) ||
         (abar.read32(reg(Hba::kPxSerr)) & Hba::kSerrErrorMask);
}

// AHCI 1.3.1 10.3.1: point the stopped port at our command list and FIS area, start FIS receive, reset the
// port if the device is stuck, wait for the device to be ready, start the command list.
Status AhciDisk::start_stopped_port() {
  RegisterWindow& abar = *m_hba.m_abar;
  for (uint32_t i = 0; i < kData; ++i) m_area.data[i] = 0;
  const uint64_t list = m_area.phys + kCommandList;
  const uint64_t fis = m_area.phys + kReceivedFis;
  abar.write32(reg(Hba::kPxClb), static_cast<uint32_t>(list));
  abar.write32(reg(Hba::kPxClbu), static_cast<uint32_t>(list >> 32));
  abar.write32(reg(Hba::kPxFb), static_cast<uint32_t>(fis));
  abar.write32(reg(Hba::kPxFbu), static_cast<uint32_t>(fis >> 32));
  abar.write32(reg(Hba::kPxIe), 0);
  uint32_t cmd = abar.read32(reg(Hba::kPxCmd)) | Hba::kCmdFisReceive | Hba::kCmdPowerOn;
  if (m_hba.m_cap & Hba::kCapStaggeredSpinUp) cmd |= Hba::kCmdSpinUp;
  abar.write32(reg(Hba::kPxCmd), cmd);
  const bool reset = needs_reset();
  if (reset) ETT_TRY(m_hba.reset_port(m_port));
  abar.write32(reg(Hba::kPxSerr), 0xFFFFFFFF);  // write-1-to-clear: errors left from before
  abar.write32(reg(Hba::kPxIs), 0xFFFFFFFF);
  const auto ready = [&] { return !(abar.read32(reg(Hba::kPxTfd)) & (Hba::kTfdBsy | Hba::kTfdDrq)); };
  if (reset)
    ETT_TRY(wait_until(*m_hba.m_clock, kResetReadyMs,
                       "ahci: the device stays busy after a COMRESET (PxTFD.BSY or DRQ set)", ready));
  else
    ETT_TRY(wait_until(*m_hba.m_clock, kDeviceReadyMs,
                       "ahci: the device stays busy after the port started (PxTFD.BSY or DRQ set)", ready));
  abar.write32(reg(Hba::kPxCmd), abar.read32(reg(Hba::kPxCmd)) | Hba::kCmdStart);
  return {};
}

Status AhciDisk::close() {
  return m_hba.stop_port(m_port);
}

Status AhciDisk::identify() {
  ETT_TRY(run(kIdentify, 0, 0, kSectorSize, false, kIdentifyMs));
  uint16_t words[256];
  __builtin_memcpy(words, m_area.data + kData, sizeof(words));
  const IdentifyData id = parse_identify(words);
  __builtin_memcpy(m_model, id.model, sizeof(m_model));
  m_lba48 = id.lba48;
  if (id.sectors == 0) return fail("ahci: the disk reports no LBA sectors");
  if (!supported_block_size(id.logical_sector_bytes)) {
    static char message[160];
    lib::format(message, sizeof(message), kLogicalSectorRefusal, "ahci", id.logical_sector_bytes);
    return fail(message);
  }
  m_shift = block_shift(id.logical_sector_bytes);
  m_sector_count = id.sectors << m_shift;
  return {};
}

Status AhciDisk::run(Command command, uint64_t lba, uint32_t sectors, uint32_t bytes, bool write,
                     uint32_t timeout_ms) {
  ETT_TRY(issue(command, lba, sectors, bytes, kData, write, timeout_ms));
  return complete(command, bytes, timeout_ms);
}

Status AhciDisk::issue(Command command, uint64_t lba, uint32_t sectors, uint32_t bytes, uint32_t data_offset,
                       bool write, uint32_t timeout_ms) {
  RegisterWindow& abar = *m_hba.m_abar;
  ETT_TRY(wait_until(*m_hba.m_clock, timeout_ms,
                     "ahci: the device stays busy before a command (PxTFD.BSY or DRQ set)",
                     [&] { return !(abar.read32(reg(Hba::kPxTfd)) & (Hba::kTfdBsy | Hba::kTfdDrq)); }));

  uint8_t* table = m_area.data + kCommandTable;
  for (uint32_t i = 0; i < kPrdtOffset + 16; ++i) table[i] = 0;
  table[kFisType] = kFisRegisterHostToDevice;
  table[kFisFlags] = kFisCommandFlag;
  table[kFisCommand] = command;
  table[kFisDevice] = command == kIdentify ? 0 : kDeviceLba;
  table[kFisLba0] = static_cast<uint8_t>(lba);
  table[kFisLba1] = static_cast<uint8_t>(lba >> 8);
  table[kFisLba2] = static_cast<uint8_t>(lba >> 16);
  if (command == kReadDma || command == kWriteDma) {
    table[kFisDevice] = static_cast<uint8_t>(kDeviceLba | ((lba >> 24) & 0x0F));
  } else {
    table[kFisLba3] = static_cast<uint8_t>(lba >> 24);
    table[kFisLba4] = static_cast<uint8_t>(lba >> 32);
    table[kFisLba5] = static_cast<uint8_t>(lba >> 40);
    table[kFisCountHigh] = static_cast<uint8_t>(sectors >> 8);
  }
  table[kFisCountLow] = static_cast<uint8_t>(sectors);

  auto* header = reinterpret_cast<uint32_t*>(m_area.data + kCommandList);
  uint32_t prdt_entries = 0;
  if (bytes > 0) {
    auto* prd = reinterpret_cast<uint32_t*>(table + kPrdtOffset);
    const uint64_t data = m_area.phys + data_offset;
    prd[0] = static_cast<uint32_t>(data);
    prd[1] = static_cast<uint32_t>(data >> 32);
    prd[2] = 0;
    prd[3] = bytes - 1;  // DBC: byte count minus one (bit 0 is always 1: counts are even); at most 4 MiB
    prdt_entries = 1;
  }
  const uint64_t table_phys = m_area.phys + kCommandTable;
  header[0] = kHeaderFisLength | (write ? uint32_t{kHeaderWrite} : 0u) | (prdt_entries << kHeaderPrdtShift);
  header[1] = 0;  // PRDBC: the HBA counts the bytes moved
  header[2] = static_cast<uint32_t>(table_phys);
  header[3] = static_cast<uint32_t>(table_phys >> 32);
  for (uint32_t i = 4; i < 8; ++i) header[i] = 0;

  abar.write32(reg(Hba::kPxIs), 0xFFFFFFFF);
  dma_barrier();
  abar.write32(reg(Hba::kPxCi), 1);
  return {};
}

Status AhciDisk::complete(Command command, uint32_t bytes, uint32_t timeout_ms) {
  RegisterWindow& abar = *m_hba.m_abar;
  Clock& clock = *m_hba.m_clock;
  const uint64_t deadline = clock.deadline_after_ms(timeout_ms);
  for (;;) {
    if (abar.read32(reg(Hba::kPxIs)) & Hba::kIsTaskFileError) break;
    if (!(abar.read32(reg(Hba::kPxCi)) & 1)) break;
    if (clock.now() > deadline) {
      if (!(abar.read32(reg(Hba::kPxCi)) & 1)) break;
      (void)close();  // the HBA must not finish the command into memory we reuse
      return fail("ahci: timed out waiting for a command to complete (PxCI stays set)");
    }
    clock.relax();
  }
  dma_barrier();
  const uint32_t tfd = abar.read32(reg(Hba::kPxTfd));
  if ((abar.read32(reg(Hba::kPxIs)) & Hba::kIsTaskFileError) || (tfd & Hba::kTfdErr)) {
    // The HBA stops processing the list after a task-file error: restart the port for the next command.
    (void)start();
    switch (command) {
      case kIdentify:
        return fail("ahci: the device aborted IDENTIFY (not an ATA disk)");
      case kReadDmaExt:
      case kReadDma:
        return fail("ahci: READ DMA failed (the device reported an error)");
      case kWriteDmaExt:
      case kWriteDma:
        return fail("ahci: WRITE DMA failed (the device reported an error)");
      default:
        return fail("ahci: FLUSH CACHE failed (the device reported an error)");
    }
  }
  const auto* header = reinterpret_cast<const uint32_t*>(m_area.data + kCommandList);
  if (bytes > 0 && header[1] != bytes)
    return fail("ahci: the HBA moved fewer bytes than the command asked for");
  return {};
}

Status AhciDisk::start_write(uint64_t lba, uint32_t count, uint32_t index) {
  if (m_outstanding_bytes) return fail("ahci: a write is already outstanding");
  if (index >= kStagingBuffers || count == 0 || count > staging_sectors())
    return fail("ahci: bad staging write");
  if (lba + count > m_sector_count) return fail("ahci: write beyond the end of the disk");
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  const uint32_t bytes = count * kSectorSize;
  ETT_TRY(issue(m_lba48 ? kWriteDmaExt : kWriteDma, lba >> m_shift, count >> m_shift, bytes,
                kStaging + index * kStagingBytes, true, kTransferMs));
  m_outstanding_bytes = bytes;
  return {};
}

Status AhciDisk::finish_write() {
  if (!m_outstanding_bytes) return {};
  const uint32_t bytes = m_outstanding_bytes;
  m_outstanding_bytes = 0;
  return complete(m_lba48 ? kWriteDmaExt : kWriteDma, bytes, kTransferMs);
}

// `lba` and `count` are 512-byte sectors; the commands count logical sectors (2^m_shift of them).
Status AhciDisk::read(uint64_t lba, uint32_t count, void* buffer) {
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  auto* out = static_cast<uint8_t*>(buffer);
  while (count > 0) {
    const uint32_t batch = count < kMaxSectors ? count : kMaxSectors;
    if (lba + batch > m_sector_count) return fail("ahci: read beyond the end of the disk");
    ETT_TRY(run(m_lba48 ? kReadDmaExt : kReadDma, lba >> m_shift, batch >> m_shift, batch * kSectorSize,
                false, kTransferMs));
    __builtin_memcpy(out, m_area.data + kData, batch * kSectorSize);
    out += batch * kSectorSize;
    lba += batch;
    count -= batch;
  }
  return {};
}

Status AhciDisk::write(uint64_t lba, uint32_t count, const void* data) {
  if (!whole_blocks(lba, count, m_shift)) return fail(kPartialBlock);
  const auto* in = static_cast<const uint8_t*>(data);
  while (count > 0) {
    const uint32_t batch = count < kMaxSectors ? count : kMaxSectors;
    if (lba + batch > m_sector_count) return fail("ahci: write beyond the end of the disk");
    __builtin_memcpy(m_area.data + kData, in, batch * kSectorSize);
    ETT_TRY(run(m_lba48 ? kWriteDmaExt : kWriteDma, lba >> m_shift, batch >> m_shift, batch * kSectorSize,
                true, kTransferMs));
    in += batch * kSectorSize;
    lba += batch;
    count -= batch;
  }
  return {};
}

Status AhciDisk::flush() {
  return run(m_lba48 ? kFlushCacheExt : kFlushCache, 0, 0, 0, false, kFlushMs);
}

}  // namespace ett::drivers::storage
