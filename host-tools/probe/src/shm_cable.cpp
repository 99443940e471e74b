// shm_cable.cpp: the QEMU virtual probe as a cable: compare-and-swap on the shared line byte, paced on the
// kernel's heartbeat so that two writes of this cable never fall into one poll.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "cable.h"
#include "ett/virtual_probe.h"

namespace ett::probe {

namespace {

using host::ErrorKind;
using host::make_error;

constexpr size_t kMapBytes = vprobe::kControlOffset + 4096;  // the line byte's page and the control page
// A stall of QEMU's vCPU thread lasts milliseconds; a kernel that stops beating for this long has hung or
// ended, and the write goes out unpaced rather than blocking the program that signals.
constexpr uint64_t kPaceLimitNs = 1'000'000'000;
constexpr uint64_t kSpinNs = 50'000;  // spin this long for the next beat, then sleep between looks
constexpr long kNapNs = 20'000;

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

class ShmCable final : public Cable {
 public:
  ShmCable(uint8_t* map, bool pace) : m_map(map), m_pace(pace) {
    m_beat_at_write = heartbeat().load(std::memory_order_acquire);
    m_lines = std::atomic_ref<uint8_t>(m_map[vprobe::kLinesOffset]).load(std::memory_order_acquire);
  }
  ~ShmCable() override { (void)close(); }

  host::Expected<uint8_t> put(const host::ProbeLayout& layout, int probe, uint8_t code) override {
    if (!m_map) return make_error(ErrorKind::Io, "the probe is closed");
    wait_for_poll();
    // CAS on the byte: another process may own another probe of the same byte and write at the same moment.
    std::atomic_ref<uint8_t> byte(m_map[vprobe::kLinesOffset]);
    uint8_t old = byte.load(std::memory_order_acquire);
    uint8_t next = 0;
    do {
      if (layout.code_of(old, probe) == code)
        return make_error(ErrorKind::Usage,
                          "probe " + std::to_string(probe) + " already shows code " + std::to_string(code) +
                              ": the same code again is no change the capture kernel could see");
      next = layout.with_code(old, probe, code);
    } while (!byte.compare_exchange_weak(old, next, std::memory_order_seq_cst, std::memory_order_acquire));
    // seq_cst: the store is globally visible before the heartbeat is read (as the injector does).
    m_beat_at_write = heartbeat().load(std::memory_order_acquire);
    m_lines = next;
    return next;
  }

  uint8_t lines() const override { return m_lines; }

  host::Status close() override {
    if (m_map && munmap(m_map, kMapBytes) != 0)
      return make_error(ErrorKind::Io, std::string("munmap: ") + std::strerror(errno));
    m_map = nullptr;
    return {};
  }

 private:
  vprobe::Control& control() const {
    return *reinterpret_cast<vprobe::Control*>(m_map + vprobe::kControlOffset);
  }
  std::atomic_ref<uint32_t> heartbeat() const { return std::atomic_ref<uint32_t>(control().heartbeat); }
  bool capturing() const {
    return std::atomic_ref<uint32_t>(control().state).load(std::memory_order_acquire) ==
           static_cast<uint32_t>(vprobe::KernelState::Capturing);
  }

  // Waits until the kernel has polled since this cable's previous write (or since the open, for the first:
  // a write of another process just before may still be unseen). No kernel capturing: nothing to wait for.
  void wait_for_poll() const {
    if (!m_pace) return;
    const uint64_t start = monotonic_ns();
    while (capturing() &&
           heartbeat().load(std::memory_order_acquire) - m_beat_at_write < vprobe::kPaceBeats) {
      const uint64_t waited = monotonic_ns() - start;
      if (waited >= kPaceLimitNs) return;
      if (waited < kSpinNs) {
        _mm_pause();
      } else {
        // Sleeping leaves the CPU to QEMU's vCPU thread, which is what has to run for the next beat.
        timespec nap{0, kNapNs};
        nanosleep(&nap, nullptr);
      }
    }
  }

  uint8_t* m_map;
  bool m_pace;
  uint32_t m_beat_at_write = 0;
  uint8_t m_lines = 0;
};

}  // namespace

host::Expected<std::unique_ptr<Cable>> open_shm_cable(const ProbeUrl& url) {
  const std::string what = url.path + " is not an ETT virtual probe file";
  const std::string made_by =
      " (`ett qemu run` creates one and names it in $ETT_PROBE_URL); nothing was written";
  struct stat st {};
  if (::stat(url.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return make_error(ErrorKind::Usage, what + ": not a regular file" + made_by);
  const int fd = ::open(url.path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return make_error(ErrorKind::Io,
                      "cannot open the virtual probe file " + url.path + ": " + std::strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < static_cast<off_t>(vprobe::kMinSize)) {
    ::close(fd);
    return make_error(ErrorKind::Usage, what + ": smaller than 1 MiB" + made_by);
  }
  // Read the control block before anything is mapped writable: only a file the host stamped as a probe (its
  // magic and this version) gets its line byte written, so a mistyped path never loses a byte.
  vprobe::Control control{};
  const ssize_t got = ::pread(fd, &control, sizeof control, vprobe::kControlOffset);
  if (got != static_cast<ssize_t>(sizeof control) || control.host_magic != vprobe::kHostMagic) {
    ::close(fd);
    return make_error(ErrorKind::Usage, what + ": no probe control block at offset 4096" + made_by);
  }
  if (control.file_version != vprobe::kFileVersion) {
    ::close(fd);
    return make_error(ErrorKind::Usage, url.path + ": virtual probe file version " +
                                            std::to_string(control.file_version) +
                                            ", this libettprobe knows " +
                                            std::to_string(vprobe::kFileVersion) + "; nothing was written");
  }
  void* map = mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED)
    return make_error(ErrorKind::Io, "mmap " + url.path + ": " + std::strerror(map_errno));
  return std::unique_ptr<Cable>(std::make_unique<ShmCable>(static_cast<uint8_t*>(map), url.pace));
}

}  // namespace ett::probe
