// output_file.cpp: writes an export or report to a file or stdout.
#include "export/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ett::host {

Status write_output(const std::string& path, const std::string& text, bool force) {
  if (path.empty() || path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      return make_error(ErrorKind::Io, errno_message("standard output", errno));
    return {};
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      return make_error(ErrorKind::Usage, path + ": already exists; use --force to overwrite it");
    return make_error(ErrorKind::Io, errno_message(path, errno));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return make_error(ErrorKind::Io, errno_message(path, error));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return make_error(ErrorKind::Io, errno_message(path, errno));
  return {};
}

}  // namespace ett::host
