// resources.h: what a request needs, checked before it starts: memory to hold what it builds, disk space for
// what it writes. A request beyond the machine is refused with both numbers instead of ending in bad_alloc
// or a disk filled halfway.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace ett::host {

// The memory one request may take: half of this machine's physical memory, or less under RLIMIT_AS.
uint64_t memory_budget_bytes();
// Usage error "WHAT needs 64.0 GB of memory; at most 12.0 GB may be used here (half of this machine's
// 24.0 GB)" when `bytes` exceeds the budget. `what` starts the message ("--events 4000000000").
Status check_memory(uint64_t bytes, const std::string& what);
// Usage error when the file system that holds `path` (a file, or the directory a new file goes to) has fewer
// than `bytes` free for an unprivileged writer.
Status check_disk_space(const std::string& path, uint64_t bytes, const std::string& what);
// "64.0 GB", "512 kB": sizes in messages.
std::string byte_size_text(uint64_t bytes);

}  // namespace ett::host
