// write_all.h: a whole buffer written to a descriptor, however many calls the kernel takes for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ett::host {

// Writes all `size` bytes at the descriptor's position (write(2), for pipes and terminals too), retrying what
// a signal interrupted. An error is "`what`: strerror"; a write that takes nothing is ENOSPC.
Status write_all(int fd, const void* data, size_t size, const std::string& what);

// The same at `offset` (pwrite(2)), the descriptor's position left alone.
Status pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& what);

}  // namespace ett::host
