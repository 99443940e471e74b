// fuzz_support.h: what the fuzz targets share: a failed invariant stops the run (libFuzzer saves the input),
// and bytes become a file that TraceImage::open can read without touching the disk.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ett::fuzz {

// An invariant of the code under test that this input broke: print it and abort, so that libFuzzer keeps the
// input as a crash and the replay test fails.
#define ETT_FUZZ_CHECK(condition)                                                            \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

// An anonymous in-memory file holding `size` bytes, opened by path as /proc/self/fd/N.
class MemoryFile {
 public:
  MemoryFile(const void* data, size_t size) : m_fd(::memfd_create("ett-fuzz", MFD_CLOEXEC)) {
    ETT_FUZZ_CHECK(m_fd >= 0);
    const auto* bytes = static_cast<const uint8_t*>(data);
    size_t done = 0;
    while (done < size) {
      const ssize_t wrote = ::write(m_fd, bytes + done, size - done);
      ETT_FUZZ_CHECK(wrote > 0);
      done += static_cast<size_t>(wrote);
    }
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { ::close(m_fd); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(m_fd); }

 private:
  int m_fd;
};

}  // namespace ett::fuzz
