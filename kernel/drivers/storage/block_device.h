// block_device.h: a disk addressed in 512-byte sectors (the trace format's unit), whatever its interface (IDE
// PIO, AHCI, NVMe) and its logical block size (512 bytes, or 1024-4096 on an Advanced Format "4Kn" drive):
// all the trace disk search and the session writer need.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::drivers::storage {

class BlockDevice {
 public:
  static constexpr uint32_t kSectorSize = 512;
  static constexpr uint32_t kMaxBlockSize = 4096;

  // `count` sectors (any number: the driver splits them into commands) at `lba`. On a drive whose logical
  // blocks are larger than a sector, `lba` and `count` must be whole blocks (whole_blocks() below): a driver
  // never reads or rewrites part of a block, and refuses such a request.
  virtual Status read(uint64_t lba, uint32_t count, void* buffer) = 0;
  virtual Status write(uint64_t lba, uint32_t count, const void* data) = 0;
  // Everything written so far is on the medium (or in QEMU's image file) when this returns.
  virtual Status flush() = 0;
  virtual uint64_t sector_count() const = 0;  // in 512-byte sectors, whatever the block size
  // The drive's logical block in bytes: a power of two from 512 to kMaxBlockSize.
  virtual uint32_t block_size() const { return kSectorSize; }
  uint32_t sectors_per_block() const { return block_size() / kSectorSize; }
  virtual const char* model() const = 0;
  // Called once the disk is known to be the trace disk: settings that change the drive (IDE multiple mode).
  virtual void prepare_for_writing() {}
  // After the last flush of a dump: the drive may lose power now, and nothing runs (NVMe: a shutdown
  // notification, then the controller is disabled). The next command starts the drive again.
  virtual Status shut_down() { return {}; }

  // Overlapped writes from the driver's own DMA memory (AHCI, NVMe): the caller fills one of two staging
  // buffers while the device writes the other, and no byte is copied. A driver without them returns 0
  // sectors, and the caller uses write().
  static constexpr uint32_t kStagingBuffers = 2;
  virtual uint32_t staging_sectors() const { return 0; }
  virtual uint8_t* staging(uint32_t /*index*/) { return nullptr; }
  // Starts writing `count` sectors of staging buffer `index` at `lba`; at most one write is outstanding.
  virtual Status start_write(uint64_t /*lba*/, uint32_t /*count*/, uint32_t /*index*/) {
    return fail("this disk has no staging buffers");
  }
  // Waits for the outstanding write (none: returns at once).
  virtual Status finish_write() { return {}; }

 protected:
  ~BlockDevice() = default;
};

// Whether a logical block of `bytes` is one the drivers take: a power of two from 512 to kMaxBlockSize.
constexpr bool supported_block_size(uint32_t bytes) {
  return bytes >= BlockDevice::kSectorSize && bytes <= BlockDevice::kMaxBlockSize &&
         (bytes & (bytes - 1)) == 0;
}
// log2 of the sectors per block of `bytes` (a supported size): 0 for 512, 3 for 4096.
constexpr uint32_t block_shift(uint32_t bytes) {
  uint32_t shift = 0;
  while ((BlockDevice::kSectorSize << shift) < bytes) ++shift;
  return shift;
}
// Whether `count` sectors at `lba` are whole blocks of 2^`shift` sectors.
constexpr bool whole_blocks(uint64_t lba, uint64_t count, uint32_t shift) {
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  return (lba & mask) == 0 && (count & mask) == 0;
}
inline constexpr const char* kPartialBlock =
    "a transfer that is not whole logical blocks (the trace disk writes only whole blocks)";

}  // namespace ett::drivers::storage
