// write_all.cpp: whole buffers written to a descriptor.
#include "common/write_all.h"

#include <unistd.h>

#include <cerrno>

namespace ett::host {

namespace {

// `write_some(bytes, count, done)` makes one call for the `count` bytes at `bytes`, `done` bytes in.
template <typename WriteSome>
Status write_whole(const void* data, size_t size, const std::string& what, WriteSome write_some) {
  const auto* bytes = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write_some(bytes + done, size - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(ErrorKind::Io, errno_message(what, n < 0 ? errno : ENOSPC));
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

Status write_all(int fd, const void* data, size_t size, const std::string& what) {
  return write_whole(data, size, what,
                     [fd](const char* bytes, size_t count, size_t) { return ::write(fd, bytes, count); });
}

Status pwrite_all(int fd, const void* data, size_t size, uint64_t offset, const std::string& what) {
  return write_whole(data, size, what, [fd, offset](const char* bytes, size_t count, size_t done) {
    return ::pwrite(fd, bytes, count, static_cast<off_t>(offset + done));
  });
}

}  // namespace ett::host
