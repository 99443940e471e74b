// qemu_direct.h: boot tests that drive QEMU themselves (several IDE disks, a monitor socket for keys and the
// screen, killing QEMU mid-dump), with the same virtual probe and handshake as `ett qemu run`.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ett/virtual_probe.h"
#include "harness/qemu_process.h"
#include "qemu_test_support.h"
#include "harness/shared_memory.h"

namespace ett::test {

using vprobe::KernelState;

struct DirectOptions {
  std::string kernel = std::string(ETT_BIN_DIR) + "/ett-kernel.elf";
  std::string iso;     // boots the GRUB ISO instead of -kernel
  std::string append;  // kernel arguments (-kernel only)
  std::vector<std::pair<int, std::string>> disks;  // IDE index (0-3) and raw image
  std::string drive_options;  // appended to every -drive, e.g. ",throttling.bps-write=N"
  bool monitor = false;
  std::vector<std::string> qemu_args;  // more QEMU options, e.g. {"-cpu", "max"}
};

class QemuMachine {
 public:
  explicit QemuMachine(const DirectOptions& options, const fs::path& dir) {
    auto shm = host::SharedMemoryFile::create();
    if (!shm) throw std::runtime_error(shm.error().message);
    m_shm = std::make_unique<host::SharedMemoryFile>(std::move(*shm));
    std::vector<std::string> argv = {"qemu-system-i386", "-M", "pc", "-accel", "tcg", "-m", "256",
                                     "-display", "none", "-serial", "stdio", "-no-reboot"};
    if (options.monitor) {
      m_monitor_path = (dir / "monitor.sock").string();
      argv.insert(argv.end(), {"-monitor", "unix:" + m_monitor_path + ",server,nowait"});
    } else {
      argv.insert(argv.end(), {"-monitor", "none"});
    }
    argv.insert(argv.end(), {"-object",
                             "memory-backend-file,id=shm0,mem-path=" + m_shm->path() + ",size=1M,share=on",
                             "-device", "ivshmem-plain,memdev=shm0", "-device",
                             "isa-debug-exit,iobase=0xf4,iosize=0x04"});
    argv.insert(argv.end(), options.qemu_args.begin(), options.qemu_args.end());
    for (const auto& [index, image] : options.disks)
      argv.insert(argv.end(),
                  {"-drive", "file=" + image + ",format=raw,if=ide,index=" + std::to_string(index) +
                                            options.drive_options});
    if (!options.iso.empty())
      argv.insert(argv.end(), {"-cdrom", options.iso, "-boot", "d"});
    else
      argv.insert(argv.end(), {"-kernel", options.kernel, "-append", options.append});
    auto qemu = host::QemuProcess::start(argv, nullptr);
    if (!qemu) throw std::runtime_error(qemu.error().message);
    m_qemu = std::move(*qemu);
  }
  ~QemuMachine() {
    if (m_monitor_fd >= 0) ::close(m_monitor_fd);
  }

  host::QemuProcess& process() { return *m_qemu; }
  vprobe::Control* control() { return m_shm->control(); }
  std::string serial() const { return m_qemu->serial(); }

  KernelState state() {
    return static_cast<KernelState>(std::atomic_ref<uint32_t>(control()->state).load());
  }
  bool found_probe() { return std::atomic_ref<uint32_t>(control()->magic).load() == vprobe::kControlMagic; }

  // Waits until `done()` holds, QEMU exits, or the time is up.
  template <typename Done>
  bool wait_until(Done done, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      if (m_qemu->poll()) return done();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
  }
  bool wait_state(KernelState wanted, double seconds) {
    return wait_until([&] { return found_probe() && state() == wanted; }, seconds);
  }
  // Waits for `text` to appear in the serial output after byte `from`.
  bool wait_serial(const std::string& text, double seconds, size_t from = 0) {
    return wait_until([&] { return serial().find(text, from) != std::string::npos; }, seconds);
  }
  void set_lines(uint8_t lines) { std::atomic_ref<uint8_t>(*m_shm->lines()).store(lines); }
  void request_stop() {
    std::atomic_ref<uint32_t>(control()->command).store(static_cast<uint32_t>(vprobe::HostCommand::Stop));
  }
  uint32_t heartbeat() { return std::atomic_ref<uint32_t>(control()->heartbeat).load(); }
  std::optional<host::QemuExit> wait_exit(double seconds) {
    wait_until([] { return false; }, seconds);
    return m_qemu->poll();
  }

  // One monitor command; returns its output (up to the next prompt).
  std::string monitor(const std::string& command) {
    if (m_monitor_fd < 0) {
      m_monitor_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", m_monitor_path.c_str());
      if (::connect(m_monitor_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return "";
      read_to_prompt();
    }
    const std::string line = command + "\n";
    if (::write(m_monitor_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return "";
    return read_to_prompt();
  }
  // The guest's 80x25 text screen, one string per row, through `pmemsave` of VGA text memory.
  std::vector<std::string> screen(const fs::path& scratch) {
    const fs::path file = scratch / "screen.bin";
    fs::remove(file);
    monitor("pmemsave 0xb8000 4000 \"" + file.string() + "\"");  // quoted: the size is an expression
    const std::string cells = read_file(file);
    std::vector<std::string> rows;
    for (size_t row = 0; row < 25 && cells.size() >= 4000; ++row) {
      std::string text;
      for (size_t column = 0; column < 80; ++column) text += cells[(row * 80 + column) * 2];
      rows.push_back(text);
    }
    return rows;
  }
  void send_key(const std::string& key) { monitor("sendkey " + key); }
  // Presses Enter on the start screen until the capture starts: the start screen drops keys pressed before it
  // reads the keyboard (just after its serial line), and Enter does nothing during a capture.
  bool start_capture() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      send_key("ret");
      if (wait_state(KernelState::Capturing, 2)) return true;
    }
    return false;
  }
  // Waits (10 s at most) until screen row `row` holds `text`.
  bool screen_has(const fs::path& scratch, uint32_t row, const std::string& text) {
    return wait_until(
        [&] {
          auto rows = screen(scratch);
          return rows.size() == 25 && rows[row].find(text) != std::string::npos;
        },
        10);
  }

 private:
  std::string read_to_prompt() {
    std::string out;
    char buffer[4096];
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (out.find("(qemu) ") == std::string::npos && std::chrono::steady_clock::now() < until) {
      const ssize_t got = ::read(m_monitor_fd, buffer, sizeof(buffer));
      if (got <= 0) break;
      out.append(buffer, static_cast<size_t>(got));
    }
    return out;
  }

  std::unique_ptr<host::SharedMemoryFile> m_shm;
  std::unique_ptr<host::QemuProcess> m_qemu;
  std::string m_monitor_path;
  int m_monitor_fd = -1;
};

// An image of `bytes` random bytes (an unlabelled disk somebody cares about).
inline std::string write_random_image(const fs::path& path, size_t bytes, uint32_t seed) {
  std::string contents(bytes, '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (auto& byte : contents) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return contents;
}

}  // namespace ett::test
