// machine.cpp: the machine's load and the cost of its fresh memory, for the benchmarks' first lines.
#include "machine.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <chrono>
#include <fstream>

namespace ett::bench {

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

double touch_seconds(size_t bytes) {
  const auto start = std::chrono::steady_clock::now();
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return -1;
  ::madvise(block, bytes, MADV_HUGEPAGE);
  auto* bytes_of = static_cast<volatile char*>(block);
  for (size_t at = 0; at < bytes; at += 4096) bytes_of[at] = 1;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::munmap(block, bytes);
  return seconds;
}

std::string fresh_memory_line() {
  const double cold = touch_seconds(size_t{1} << 30);
  const double warm = touch_seconds(size_t{1} << 30);
  if (cold < 0 || warm < 0) return "fresh memory: 1 GiB could not be mapped";
  return fmt::format("fresh memory: 1 GiB touched in {:.2f} s, again right after in {:.2f} s", cold, warm);
}

}  // namespace ett::bench
