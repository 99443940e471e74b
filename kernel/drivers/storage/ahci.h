// ahci.h: a polled AHCI (SATA) host bus adapter and one disk on one of its ports: BIOS handoff, staggered
// spin-up, COMRESET, port start and stop, IDENTIFY, READ/WRITE DMA EXT and FLUSH CACHE EXT through command
// slot 0. No interrupts; every wait has a deadline and fails with a message naming what timed out.
#pragma once

#include <stdint.h>

#include "drivers/storage/block_device.h"
#include "drivers/storage/hardware.h"
#include "ett/result.h"

namespace ett::drivers::storage {

class AhciController {
 public:
  static constexpr uint32_t kMaxPorts = 32;

  // Takes the HBA from the firmware when it owns it (BOHC), switches it to AHCI mode (GHC.AE) with its
  // interrupt off. Resets nothing: a port is only touched when it is searched.
  static Result<AhciController> open(RegisterWindow& abar, Clock& clock);

  uint32_t implemented_ports() const { return m_ports_implemented; }
  uint32_t port_count() const;
  bool took_over_from_firmware() const { return m_took_over; }
  // The firmware had not let go of the HBA (BOHC.BOS still set) when the handoff's time ran out; the
  // kernel uses it anyway, as FreeBSD does.
  bool firmware_kept_ownership() const { return m_firmware_kept; }

  // What the port's link says, before anything is sent to it.
  enum class Link : uint8_t { NoDevice, Offline, Up };
  Link link(uint32_t port);
  // Brings up the link of every implemented port that has a device. On a controller with staggered spin-up
  // (CAP.SSS) a device's link only comes up once its port is told to spin it up (PxCMD.SUD): one port at a
  // time, each waited for (10 ms for a device to show, 100 ms for its link), so that the disks do not all
  // draw their spin-up current at once. Then every port whose device shows without a link (PxSSTS.DET=1:
  // firmware "Fast Boot" left it down, or the drive is in an error state) gets a COMRESET. Each port must
  // have been stopped (stop_port()) first. A port still without a link after all this reads Link::Offline.
  void spin_up_ports();
  // COMRESET (AHCI 1.3.1 10.4.2): PxSCTL.DET=1 for at least 1 ms, then DET=0, and waits up to 100 ms for
  // the link (PxSSTS.DET=3); clears PxSERR. The port's command list must be stopped (stop_port()).
  Status reset_port(uint32_t port);
  // Stops a port's command engine (PxCMD.ST off, waits for CR) and then its FIS receive (FRE off, waits for
  // FR), so that it uses no memory the firmware gave it or that the kernel reuses.
  Status stop_port(uint32_t port);

 private:
  friend class AhciDisk;

  enum HbaReg : uint32_t {
    kCap = 0x00,
    kGhc = 0x04,
    kIs = 0x08,
    kPi = 0x0C,
    kVs = 0x10,
    kCap2 = 0x24,
    kBohc = 0x28,
    kPortBase = 0x100,
    kPortStride = 0x80,
  };
  enum PortReg : uint32_t {
    kPxClb = 0x00,
    kPxClbu = 0x04,
    kPxFb = 0x08,
    kPxFbu = 0x0C,
    kPxIs = 0x10,
    kPxIe = 0x14,
    kPxCmd = 0x18,
    kPxTfd = 0x20,
    kPxSig = 0x24,
    kPxSsts = 0x28,
    kPxSctl = 0x2C,
    kPxSerr = 0x30,
    kPxSact = 0x34,
    kPxCi = 0x38,
  };
  enum CapBit : uint32_t {
    kCapPortCountMask = 0x1F,        // NP: ports - 1
    kCapStaggeredSpinUp = 1u << 27,  // SSS: PxCMD.SUD must be set
    kCap64Bit = 1u << 31,
  };
  enum GhcBit : uint32_t {
    kGhcInterruptEnable = 1u << 1,
    kGhcAhciEnable = 1u << 31,
  };
  enum Cap2Bit : uint32_t { kCap2BiosHandoff = 1u << 0 };  // BOH
  enum BohcBit : uint32_t {
    kBohcBiosOwned = 1u << 0,  // BOS
    kBohcOsOwned = 1u << 1,    // OOS
    kBohcBiosBusy = 1u << 4,   // BB
  };
  enum PortCmdBit : uint32_t {
    kCmdStart = 1u << 0,         // ST
    kCmdSpinUp = 1u << 1,        // SUD
    kCmdPowerOn = 1u << 2,       // POD
    kCmdFisReceive = 1u << 4,    // FRE
    kCmdFisRunning = 1u << 14,   // FR
    kCmdListRunning = 1u << 15,  // CR
  };
  enum PortIsBit : uint32_t { kIsTaskFileError = 1u << 30 };  // TFES
  enum TfdBit : uint32_t {
    kTfdErr = 1u << 0,
    kTfdDrq = 1u << 3,
    kTfdBsy = 1u << 7,
  };
  enum SstsField : uint32_t {
    kSstsDetMask = 0xF,
    kSstsDetPresent = 0x3,  // device present and PHY communication established
    kSstsDetNoPhy = 0x1,    // device present, no communication
  };
  enum SctlField : uint32_t {
    kSctlDetMask = 0xF,
    kSctlDetComreset = 0x1,  // held: the port sends COMRESET
    // IPM: no transitions to the Partial or Slumber power states (a polled driver never wakes the link).
    kSctlNoPartialSlumber = 0x3u << 8,
  };
  // PxSERR's low half (ERR) records data, protocol and internal errors; its high half (DIAG) also records
  // normal link events (a COMRESET sets DIAG.X), so only ERR says that the port needs a reset.
  enum SerrField : uint32_t { kSerrErrorMask = 0xFFFF };

  AhciController(RegisterWindow& abar, Clock& clock) : m_abar(&abar), m_clock(&clock) {}
  void take_from_firmware();
  // Waits for a device to show on the port (PxSSTS.DET not 0, 10 ms) and then for its link (DET=3, 100 ms
  // in all); what the link says at the end.
  Link wait_for_link(uint32_t port);
  static uint32_t port_reg(uint32_t port, PortReg reg) { return kPortBase + port * kPortStride + reg; }

  RegisterWindow* m_abar;
  Clock* m_clock;
  uint32_t m_cap = 0;
  uint32_t m_ports_implemented = 0;
  bool m_took_over = false;
  bool m_firmware_kept = false;
};

class AhciDisk : public BlockDevice {
 public:
  // The DMA area holds the command list, the received-FIS area, one command table and the data bounce
  // buffer; it must be 4 KiB aligned and at least this big.
  static constexpr uint32_t kDataBytes = 64 * 1024;
  static constexpr uint32_t kStagingBytes = 1024 * 1024;  // each of the two staging buffers
  static constexpr uint32_t kDmaBytes = 4096 + kDataBytes + kStagingBuffers * kStagingBytes;

  // What sits on a port whose link is up, from its signature.
  enum class Kind : uint8_t { Disk, Atapi, PortMultiplier, Other };

  // Stops the port, points it at `area`, starts it and IDENTIFYs the disk. Reads nothing else: a disk is only
  // read until its label is checked. `kind` says what the port holds when the open fails because it is not
  // a disk.
  static Result<AhciDisk> open(AhciController& hba, uint32_t port, const DmaArea& area, Kind* kind = nullptr);

  Status read(uint64_t lba, uint32_t count, void* buffer) override;
  Status write(uint64_t lba, uint32_t count, const void* data) override;
  Status flush() override;
  // 28-bit commands count at most 256 logical sectors.
  uint32_t staging_sectors() const override {
    return m_lba48 ? kStagingBytes / kSectorSize : 256u << m_shift;
  }
  uint8_t* staging(uint32_t index) override { return m_area.data + kStaging + index * kStagingBytes; }
  Status start_write(uint64_t lba, uint32_t count, uint32_t index) override;
  Status finish_write() override;
  uint64_t sector_count() const override { return m_sector_count; }
  uint32_t block_size() const override { return kSectorSize << m_shift; }
  const char* model() const override { return m_model; }
  bool has_lba48() const { return m_lba48; }
  uint32_t port() const { return m_port; }
  // Stops the port again (a disk that is not the trace disk): the HBA no longer reads the DMA area.
  Status close();

 private:
  using Hba = AhciController;
  enum FisType : uint8_t { kFisRegisterHostToDevice = 0x27 };
  enum FisByte : uint32_t {
    kFisType = 0,
    kFisFlags = 1,  // bit 7: this FIS carries a command
    kFisCommand = 2,
    kFisFeature = 3,
    kFisLba0 = 4,
    kFisLba1 = 5,
    kFisLba2 = 6,
    kFisDevice = 7,
    kFisLba3 = 8,
    kFisLba4 = 9,
    kFisLba5 = 10,
    kFisFeatureHigh = 11,
    kFisCountLow = 12,
    kFisCountHigh = 13,
  };
  static constexpr uint8_t kFisCommandFlag = 0x80;
  static constexpr uint8_t kDeviceLba = 0x40;
  enum Command : uint8_t {
    kReadDmaExt = 0x25,
    kWriteDmaExt = 0x35,
    kReadDma = 0xC8,
    kWriteDma = 0xCA,
    kFlushCache = 0xE7,
    kFlushCacheExt = 0xEA,
    kIdentify = 0xEC,
  };
  enum HeaderBit : uint32_t {
    kHeaderFisLength = 5,  // DW0 bits 4:0: the command FIS in dwords
    kHeaderWrite = 1u << 6,
    kHeaderPrdtShift = 16,
  };
  enum Signature : uint32_t {
    kSignatureAta = 0x00000101,
    kSignatureAtapi = 0xEB140101,
    kSignaturePortMultiplier = 0x96690101,
  };
  // The DMA area's layout (offsets; the alignment each needs is the AHCI specification's).
  enum Layout : uint32_t {
    kCommandList = 0,      // 32 headers of 32 bytes, 1 KiB aligned
    kReceivedFis = 1024,   // 256 bytes, 256 aligned
    kCommandTable = 2048,  // command FIS at 0, PRDT at 0x80; 128 aligned
    kPrdtOffset = 0x80,
    kData = 4096,
    kStaging = kData + kDataBytes,
  };
  AhciDisk(AhciController& hba, uint32_t port, const DmaArea& area)
      : m_hba(hba), m_port(port), m_area(area) {}
  uint32_t reg(Hba::PortReg r) const { return Hba::port_reg(m_port, r); }
  // Starts the port; on any failure the port is left stopped (ST, CR, FRE and FR off).
  Status start();
  Status start_stopped_port();
  bool needs_reset();
  Status identify();
  // Issues one command in slot 0 and waits for it; `bytes` of data move through the bounce buffer.
  Status run(Command command, uint64_t lba, uint32_t sectors, uint32_t bytes, bool write,
             uint32_t timeout_ms);
  // The two halves of run(): `data_offset` is where in the DMA area the data is.
  Status issue(Command command, uint64_t lba, uint32_t sectors, uint32_t bytes, uint32_t data_offset,
               bool write, uint32_t timeout_ms);
  Status complete(Command command, uint32_t bytes, uint32_t timeout_ms);

  AhciController m_hba;
  uint32_t m_port;
  DmaArea m_area;
  uint64_t m_sector_count = 0;  // 512-byte sectors
  uint32_t m_shift = 0;         // log2 of the 512-byte sectors per logical sector (IDENTIFY words 106, 117)
  bool m_lba48 = false;
  uint32_t m_outstanding_bytes = 0;  // a started write: its size; 0: none
  char m_model[41] = {};
};

}  // namespace ett::drivers::storage
