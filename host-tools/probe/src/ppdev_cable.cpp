// ppdev_cable.cpp: a real parallel port as the cable, through Linux ppdev (/dev/parportN): claim the port,
// drive the data lines forward, write them with PPWDATA, release on close.
#include <fcntl.h>
#include <linux/ppdev.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cable.h"

namespace ett::probe {

namespace {

using host::ErrorKind;
using host::make_error;

std::string failure(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// ppdev keeps no per-probe state: this process holds the port (PPCLAIM) and so owns all eight lines, and the
// shadow byte is the truth. Pacing is not needed: the capture PC polls the port at tens of millions of reads
// per second, far faster than an ioctl per write.
class PpdevCable final : public Cable {
 public:
  PpdevCable(int fd, std::string path, uint8_t lines) : m_fd(fd), m_path(std::move(path)), m_lines(lines) {}
  ~PpdevCable() override { (void)close(); }

  host::Expected<uint8_t> put(const host::ProbeLayout& layout, int probe, uint8_t code) override {
    if (m_fd < 0) return make_error(ErrorKind::Io, "the probe is closed");
    if (layout.code_of(m_lines, probe) == code)
      return make_error(ErrorKind::Usage, "probe " + std::to_string(probe) + " already shows code " +
                                              std::to_string(code) + ": the same code again is no change");
    unsigned char next = layout.with_code(m_lines, probe, code);
    if (ioctl(m_fd, PPWDATA, &next) != 0) return make_error(ErrorKind::Io, failure(m_path, "PPWDATA"));
    m_lines = next;
    return m_lines;
  }

  uint8_t lines() const override { return m_lines; }

  host::Status close() override {
    if (m_fd < 0) return {};
    const bool released = ioctl(m_fd, PPRELEASE) == 0;
    const std::string message = released ? "" : failure(m_path, "PPRELEASE");
    ::close(m_fd);
    m_fd = -1;
    if (!released) return make_error(ErrorKind::Io, message);
    return {};
  }

 private:
  int m_fd;
  std::string m_path;
  uint8_t m_lines;
};

}  // namespace

host::Expected<std::unique_ptr<Cable>> open_ppdev_cable(const ProbeUrl& url) {
  const int fd = ::open(url.path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return make_error(
        ErrorKind::Io,
        failure(url.path, "cannot open the parallel port") +
            (errno == ENOENT ? " (no such port; is the ppdev module loaded: modprobe ppdev?)" : ""));
  // PPCLAIM blocks while another driver holds the port; the data lines are then ours until PPRELEASE.
  if (ioctl(fd, PPCLAIM) != 0) {
    const std::string message = failure(url.path, "PPCLAIM (claim the port)");
    ::close(fd);
    return make_error(ErrorKind::Io, message);
  }
  int forward = 0;  // drive the data lines (a bidirectional port may have been left reading)
  unsigned char lines = 0;
  if (ioctl(fd, PPDATADIR, &forward) != 0 || ioctl(fd, PPRDATA, &lines) != 0) {
    const std::string message = failure(url.path, "PPDATADIR/PPRDATA");
    ioctl(fd, PPRELEASE);
    ::close(fd);
    return make_error(ErrorKind::Io, message);
  }
  return std::unique_ptr<Cable>(std::make_unique<PpdevCable>(fd, url.path, lines));
}

}  // namespace ett::probe
