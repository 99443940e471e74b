// resources.cpp: memory and disk space a request needs, checked against what this machine has.
#include "common/resources.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ett::host {

namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

std::string byte_size_text(uint64_t bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes >= 1'000'000'000) return fmt::format("{:.1f} GB", value / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{:.1f} MB", value / 1e6);
  if (bytes >= 1'000) return fmt::format("{:.0f} kB", value / 1e3);
  return fmt::format("{} bytes", bytes);
}

uint64_t memory_budget_bytes() {
  uint64_t budget = physical_memory_bytes() / 2;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    budget = std::min<uint64_t>(budget, limit.rlim_cur / 2);
  return budget;
}

Status check_memory(uint64_t bytes, const std::string& what) {
  const uint64_t budget = memory_budget_bytes();
  if (budget == 0 || bytes <= budget) return {};
  return make_error(
      ErrorKind::Usage,
      fmt::format("{} needs {} of memory; at most {} may be used here (half of this machine's {}, "
                  "or of its address-space limit)",
                  what, byte_size_text(bytes), byte_size_text(budget),
                  byte_size_text(physical_memory_bytes())));
}

Status check_disk_space(const std::string& path, uint64_t bytes, const std::string& what) {
  struct statvfs fs {};
  const std::string place = ::access(path.c_str(), F_OK) == 0 ? path : directory_of(path);
  if (::statvfs(place.c_str(), &fs) != 0) return make_error(ErrorKind::Io, errno_message(place, errno));
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (bytes <= free_bytes) return {};
  return make_error(ErrorKind::Usage,
                    fmt::format("{} needs {} on disk; the file system of {} has {} free", what,
                                byte_size_text(bytes), place, byte_size_text(free_bytes)));
}

}  // namespace ett::host
