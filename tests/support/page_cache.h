// page_cache.h: what of a file the page cache holds (mincore), and a scratch directory on a disk, for the
// tests of the writers that keep big files out of the page cache.
#pragma once

#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ett::test {

// Pages of bytes [begin, end) of the file `fd` in the page cache (SIZE_MAX when it cannot tell).
inline size_t resident_pages(int fd, uint64_t begin, uint64_t end) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  void* map = ::mmap(nullptr, end, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return SIZE_MAX;
  std::vector<unsigned char> in_core((end + page - 1) / page);
  const bool ok = ::mincore(map, end, in_core.data()) == 0;
  ::munmap(map, end);
  if (!ok) return SIZE_MAX;
  size_t count = 0;
  for (uint64_t at = begin / page; at < in_core.size(); ++at) count += in_core[at] & 1;
  return count;
}

// A new directory under /var/tmp, which is not a tmpfs on Debian (a tmpfs has no disk to write its pages
// to); "" when it cannot be made. `on_tmpfs` says whether it is one all the same.
inline std::string make_disk_directory(bool& on_tmpfs) {
  std::string dir = "/var/tmp/ett-page-cache-XXXXXX";
  if (!::mkdtemp(dir.data())) return "";
  struct statfs fs {};
  on_tmpfs = ::statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
  return dir;
}

}  // namespace ett::test
