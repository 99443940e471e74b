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
};

struct MadeDisk {
  format::DiskLabel label{};
  bool is_device = false;
};

Expected<MadeDisk> make_disk(const MakeDiskOptions& options);

// A trace disk has 512-byte sectors (format::kSectorSize): the label counts them and the kernel reads and
// writes them. A block device whose logical block size (BLKSSZGET) is another one is refused.
Status check_logical_block_size(const std::string& path, uint32_t bytes);

// A label for a disk of `total_sectors`, with a random UUID and the current time.
format::DiskLabel new_label(uint64_t total_sectors, std::string_view name);

}  // namespace ett::host
