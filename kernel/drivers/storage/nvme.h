// nvme.h: a polled NVMe controller (admin queue, one I/O queue pair) and one of its namespaces as a disk:
// IDENTIFY, READ, WRITE and FLUSH. No interrupts; every wait has a deadline and fails with a message naming
// what timed out. A controller is stopped (CC.EN=0, CSTS.RDY=0) on every way out: an error after it was
// enabled, a timeout, a completion that is not ours, close() and shut_down() (a shutdown notification first).
#pragma once

#include <stdint.h>

#include "drivers/storage/block_device.h"
#include "drivers/storage/hardware.h"
#include "ett/result.h"

namespace ett::drivers::storage {

class NvmeController {
 public:
  static constexpr uint32_t kPageSize = 4096;
  static constexpr uint32_t kDataBytes = 64 * 1024;
  static constexpr uint32_t kStagingBytes = 1024 * 1024;  // each of the two staging buffers
  // Admin and I/O queues, an IDENTIFY page, a PRP list page, the data bounce buffer, two staging buffers and
  // their PRP lists; 4 KiB aligned.
  static constexpr uint32_t kDmaBytes =
      6 * kPageSize + kDataBytes + BlockDevice::kStagingBuffers * (kStagingBytes + kPageSize);

  // Disables the controller (one the firmware left running gets a shutdown notification first), gives it our
  // admin queue, enables it, IDENTIFYs it and creates one I/O queue pair. Writes nothing to any namespace.
  // On failure the controller is left disabled.
  static Result<NvmeController> open(RegisterWindow& bar0, Clock& clock, const DmaArea& area);
  // A normal shutdown (CC.SHN, then CSTS.SHST complete, bounded), then CC.EN=0: the drive counts no unsafe
  // shutdown and no longer reads the DMA area. The next command brings the controller up again.
  Status shut_down();
  Status close() { return shut_down(); }
  // Whether the controller is enabled with our queues (false after shut_down() or an error that stopped it).
  bool running() const { return m_running; }

  uint32_t namespace_count() const { return m_namespace_count; }
  const char* model() const { return m_model; }
  uint32_t max_transfer_bytes() const { return m_max_transfer; }

  struct NamespaceInfo {
    uint64_t sectors;  // 0: the namespace is not active
    uint32_t block_bytes;
    uint32_t metadata_bytes;  // per block, of the LBA format in use
    bool extended_lba;        // FLBAS bit 4: the metadata follows each block's data
    uint8_t protection;       // DPS bits 2:0: the end-to-end protection information type, 0: none
  };
  Result<NamespaceInfo> identify_namespace(uint32_t nsid);
  // The active namespace IDs in ascending order (at most `capacity`); returns how many. Asks for the active
  // namespace list, and when the controller does not know that command (before NVMe 1.1), returns 1..count.
  Result<uint32_t> active_namespaces(uint32_t* nsids, uint32_t capacity);

  // One I/O command on namespace `nsid`; data moves through the bounce buffer.
  // `lba` and `count` in 512-byte sectors, whole blocks of 2^`shift` sectors (the namespace's block size).
  Status read(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count, void* buffer);
  Status write(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count, const void* data);
  Status flush(uint32_t nsid);
  uint8_t* staging(uint32_t index) { return m_area.data + kStaging + index * kStagingBytes; }
  // Submits the WRITE commands for `count` sectors of staging buffer `index` (as many as the transfer limit
  // needs); finish_writes() reaps their completions.
  Status start_writes(uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count, uint32_t index);
  Status finish_writes();

 private:
  enum Reg : uint32_t {
    kCap = 0x00,  // 64-bit
    kVs = 0x08,
    kIntms = 0x0C,
    kCc = 0x14,
    kCsts = 0x1C,
    kAqa = 0x24,
    kAsq = 0x28,  // 64-bit
    kAcq = 0x30,  // 64-bit
    kDoorbells = 0x1000,
  };
  enum CcBit : uint32_t {
    kCcEnable = 1u << 0,
    kCcShutdownNormal = 1u << 14,  // CC.SHN = 01b
    kCcShutdownMask = 3u << 14,
    kCcIoSqEntrySize = 6u << 16,  // 2^6 = 64 bytes
    kCcIoCqEntrySize = 4u << 20,  // 2^4 = 16 bytes
  };
  enum CstsBit : uint32_t {
    kCstsReady = 1u << 0,
    kCstsFatal = 1u << 1,
    kCstsShutdownMask = 3u << 2,
    kCstsShutdownComplete = 2u << 2,  // CSTS.SHST = 10b
  };
  enum AdminOpcode : uint8_t {
    kCreateIoSq = 0x01,
    kCreateIoCq = 0x05,
    kIdentify = 0x06,
  };
  enum IoOpcode : uint8_t {
    kFlush = 0x00,
    kWrite = 0x01,
    kRead = 0x02,
  };
  enum IdentifyCns : uint32_t {
    kCnsNamespace = 0,
    kCnsController = 1,
    kCnsActiveNamespaces = 2,
  };
  // The DMA area, one page each, then the data buffer.
  enum Layout : uint32_t {
    kAdminSq = 0 * kPageSize,
    kAdminCq = 1 * kPageSize,
    kIoSq = 2 * kPageSize,
    kIoCq = 3 * kPageSize,
    kIdentifyPage = 4 * kPageSize,
    kPrpList = 5 * kPageSize,
    kData = 6 * kPageSize,
    kStaging = kData + kDataBytes,
    kStagingPrpLists = kStaging + BlockDevice::kStagingBuffers * kStagingBytes,
  };
  static constexpr uint16_t kQueueEntries = 16;

  struct Queue {
    uint32_t sq_offset;
    uint32_t cq_offset;
    uint16_t id;
    uint16_t sq_tail;
    uint16_t cq_head;
    uint8_t phase;
  };
  struct Command {
    uint8_t opcode;
    uint32_t nsid;
    uint32_t cdw10, cdw11, cdw12;
    uint32_t data_bytes;  // > 0: PRPs point at the bounce buffer (or the IDENTIFY page for admin IDENTIFY)
    uint32_t data_offset;
  };

  NvmeController(RegisterWindow& bar0, Clock& clock, const DmaArea& area)
      : m_bar(&bar0), m_clock(&clock), m_area(area) {}
  // Gives the controller our admin queue, enables it, IDENTIFYs it and creates the I/O queue pair; stops it
  // again when a step fails.
  Status bring_up();
  // The controller again, after shut_down() or an error stopped it.
  Status ensure_running() { return m_running ? Status{} : bring_up(); }
  // CC.EN=0 and wait for CSTS.RDY=0 (bounded): every command is aborted, no DMA runs afterwards.
  Status disable();
  // disable() after an error; returns `error`, the cause (a controller that does not stop says so next time).
  Status stop_after(const Status& error);
  Status enable();
  Status identify_controller();
  Status create_io_queues();
  // Submits one command and waits for its completion entry.
  Status submit(Queue& queue, const Command& command, uint32_t timeout_ms, const char* what);
  // The two halves of submit(): post() writes the entry and rings the doorbell (PRPs as given); reap() waits
  // for the next completion entry, takes it only when its command identifier is one of `expected` (which
  // loses that identifier) and returns its status. A timeout or a completion that is not ours stops the
  // controller.
  uint16_t post(Queue& queue, const Command& command, uint64_t prp1, uint64_t prp2);
  Status reap(Queue& queue, uint32_t timeout_ms, const char* what, uint16_t* expected, uint32_t& count);
  // PRP1/PRP2 for `bytes` at `offset` in the DMA area (the shared PRP list page when more than two pages).
  void prps(uint32_t offset, uint32_t bytes, uint64_t& prp1, uint64_t& prp2);
  uint32_t doorbell(uint16_t queue, bool completion) const {
    return kDoorbells + (2u * queue + (completion ? 1u : 0u)) * m_doorbell_stride;
  }
  Status transfer(IoOpcode opcode, uint32_t nsid, uint32_t shift, uint64_t lba, uint32_t count);

  RegisterWindow* m_bar;
  Clock* m_clock;
  DmaArea m_area;
  uint32_t m_doorbell_stride = 4;
  uint32_t m_ready_timeout_ms = 500;
  uint32_t m_max_transfer = kStagingBytes;  // per command: MDTS, or a whole staging buffer
  uint32_t m_namespace_count = 0;
  uint16_t m_next_cid = 1;
  uint32_t m_writes_in_flight = 0;
  uint16_t m_write_cids[kQueueEntries] = {};  // the identifiers of the writes in flight
  bool m_running = false;
  Queue m_admin{kAdminSq, kAdminCq, 0, 0, 0, 1};
  Queue m_io{kIoSq, kIoCq, 1, 0, 0, 1};
  char m_model[41] = {};
};

// One namespace of 512- to 4096-byte blocks (LBAF data size 2^LBADS), addressed in 512-byte sectors.
class NvmeDisk : public BlockDevice {
 public:
  static constexpr const char* kNotActive = "nvme: the namespace is not active";
  // IDENTIFYs namespace `nsid`; fails for an inactive namespace (kNotActive) and, naming the format, for
  // blocks of another size (not a power of two from 512 to 4096), metadata or protection information.
  static Result<NvmeDisk> open(NvmeController& controller, uint32_t nsid);

  Status read(uint64_t lba, uint32_t count, void* buffer) override;
  Status write(uint64_t lba, uint32_t count, const void* data) override;
  Status flush() override { return m_controller->flush(m_nsid); }
  Status shut_down() override { return m_controller->shut_down(); }
  uint32_t staging_sectors() const override { return NvmeController::kStagingBytes / kSectorSize; }
  uint8_t* staging(uint32_t index) override { return m_controller->staging(index); }
  Status start_write(uint64_t lba, uint32_t count, uint32_t index) override;
  Status finish_write() override { return m_controller->finish_writes(); }
  uint64_t sector_count() const override { return m_sectors; }
  uint32_t block_size() const override { return kSectorSize << m_shift; }
  const char* model() const override { return m_controller->model(); }
  uint32_t nsid() const { return m_nsid; }

 private:
  NvmeDisk(NvmeController& controller, uint32_t nsid, uint64_t sectors, uint32_t shift)
      : m_controller(&controller), m_nsid(nsid), m_sectors(sectors), m_shift(shift) {}

  NvmeController* m_controller;
  uint32_t m_nsid;
  uint64_t m_sectors;  // 512-byte sectors
  uint32_t m_shift;    // log2 of the sectors per block
};

}  // namespace ett::drivers::storage
