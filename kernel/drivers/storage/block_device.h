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

 protected:
  ~BlockDevice() = default;
};

}  // namespace ett::drivers::storage
