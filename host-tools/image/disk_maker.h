// disk_maker.h: creates a trace disk: writes a fresh DiskLabel to an image file or a block device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "ett/trace_format.h"

namespace ett::host {

inline constexpr uint64_t kDefaultDiskBytes = 64ull << 20;
// The label, the sectors up to the first session, one session header, its stall table and one chunk.
inline constexpr uint64_t kMinDiskBytes =
    (format::kFirstSessionLba + format::session_sectors(1)) * uint64_t{format::kSectorSize};

struct MakeDiskOptions {
  std::string path;
  uint64_t size_bytes = kDefaultDiskBytes;  // image files only; a device keeps its own size
  bool size_given = false;                  // --size was on the command line
  std::string name;
  bool force = false;  // overwrite an existing file, or a device that already holds data
  // The logical block size of the disk the label is for: 0 = a device's own (BLKSSZGET), 512 for an image.
  uint32_t block_bytes = 0;
};

struct MadeDisk {
  format::DiskLabel label{};
  bool is_device = false;
};

Expected<MadeDisk> make_disk(const MakeDiskOptions& options);

// The trace format counts 512-byte sectors (format::kSectorSize) whatever the disk's logical block size; on a
// disk of larger blocks (512 to 4096 bytes, powers of two) every session header is the last sector of a block
// (docs/design/trace-format.md, "Disks with larger blocks"). Another block size is refused, naming `path`.
Status check_logical_block_size(const std::string& path, uint32_t bytes);

// Where the first session goes on a disk of `block_bytes` blocks: kFirstSessionLba (8) for 512 bytes, else
// the first LBA from 8 on that is the last sector of a block (15 for 4096).
uint64_t first_session_lba_for(uint32_t block_bytes);

// A label for a disk of `total_sectors`, with a random UUID and the current time.
format::DiskLabel new_label(uint64_t total_sectors, std::string_view name, uint32_t block_bytes = 512);

}  // namespace ett::host
