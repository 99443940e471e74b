// block_device.h: a disk of 512-byte sectors, whatever its interface (IDE PIO, AHCI, NVMe): all the trace
// disk search and the session writer need.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::drivers::storage {

class BlockDevice {
 public:
  static constexpr uint32_t kSectorSize = 512;

  // `count` sectors (any number: the driver splits them into commands) at `lba`.
  virtual Status read(uint64_t lba, uint32_t count, void* buffer) = 0;
  virtual Status write(uint64_t lba, uint32_t count, const void* data) = 0;
  // Everything written so far is on the medium (or in QEMU's image file) when this returns.
  virtual Status flush() = 0;
  virtual uint64_t sector_count() const = 0;
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

}  // namespace ett::drivers::storage
