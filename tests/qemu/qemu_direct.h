// qemu_direct.h: boot tests that drive QEMU themselves (several disks on IDE, AHCI or NVMe, a monitor socket
// for keys and the screen, killing QEMU mid-dump, SeaBIOS or OVMF), with the same virtual probe and handshake
// as `ett qemu run`.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "drivers/console/framebuffer_text.h"
#include "ett/virtual_probe.h"
#include "harness/qemu_disks.h"
#include "harness/qemu_process.h"
#include "harness/shared_memory.h"
#include "qemu_test_support.h"

namespace ett::test {

using vprobe::KernelState;

struct DirectOptions {
  std::string kernel = std::string(ETT_BIN_DIR) + "/ett-kernel.elf";
  std::string iso;                                 // boots the GRUB ISO instead of -kernel
  std::string append;                              // kernel arguments (-kernel only)
  std::vector<std::pair<int, std::string>> disks;  // IDE index (0-3) and raw image
  std::vector<host::AttachedDisk> attached;        // more disks, on any interface (harness/qemu_disks.h)
  std::string drive_options;                       // appended to every -drive, e.g. ",throttling.bps-write=N"
  bool monitor = false;
  std::vector<std::string> qemu_args;  // more QEMU options, e.g. {"-cpu", "max"}
  bool uefi = false;           // OVMF (needs an ISO) instead of SeaBIOS; the screen is then the framebuffer
  std::string machine = "pc";  // QEMU -M value: pc or q35, with options ("pc,i8042=off")
  std::string qemu;            // the QEMU binary ("": qemu-system-i386, qemu-system-x86_64 with uefi)
};

// Debian's ovmf package: the firmware code (read-only) and the variable store template.
inline constexpr const char* kOvmfCode = "/usr/share/OVMF/OVMF_CODE_4M.fd";
inline constexpr const char* kOvmfVars = "/usr/share/OVMF/OVMF_VARS_4M.fd";

// A GRUB ISO (boot/make-iso.sh, BIOS and UEFI) whose one menu entry boots the kernel with `arguments`, the
// screen set up as boot/grub.cfg does.
inline fs::path make_test_iso(const fs::path& dir, const std::string& arguments) {
  const fs::path cfg = dir / "grub.cfg";
  std::ofstream(cfg) << "set timeout=0\nserial --unit=0 --speed=115200\nterminal_input console serial\n"
                        "terminal_output console serial\n"
                        "if [ \"$grub_platform\" = \"efi\" ]; then insmod efi_gop; set ett_gfxpayload=auto; "
                        "else set ett_gfxpayload=text; fi\nexport ett_gfxpayload\n"
                        "menuentry test {\n  multiboot2 /boot/ett-kernel.elf "
                     << arguments << "\n  set gfxpayload=$ett_gfxpayload\n}\n";
  const fs::path iso = dir / "test.iso";
  const std::string command = shell_quote(std::string(ETT_SOURCE_DIR) + "/boot/make-iso.sh") + " " +
                              shell_quote(std::string(ETT_BIN_DIR) + "/ett-kernel.elf") + " " +
                              shell_quote(cfg.string()) + " " + shell_quote(iso.string());
  if (std::system(command.c_str()) != 0) throw std::runtime_error("make-iso.sh failed");
  return iso;
}

class QemuMachine {
 public:
  explicit QemuMachine(const DirectOptions& options, const fs::path& dir) {
    auto shm = host::SharedMemoryFile::create();
    if (!shm) throw std::runtime_error(shm.error().message);
    m_shm = std::make_unique<host::SharedMemoryFile>(std::move(*shm));
    // OVMF is 64-bit firmware: it needs qemu-system-x86_64 (the kernel itself runs the same on both).
    std::vector<std::string> argv = {!options.qemu.empty() ? options.qemu
                                     : options.uefi        ? "qemu-system-x86_64"
                                                           : "qemu-system-i386",
                                     "-M",
                                     options.machine,
                                     "-accel",
                                     "tcg",
                                     "-m",
                                     "256",
                                     "-display",
                                     "none",
                                     "-serial",
                                     "stdio",
                                     "-no-reboot"};
    m_framebuffer = options.uefi;
    if (options.uefi) {
      const fs::path vars = dir / "ovmf-vars.fd";
      fs::copy_file(kOvmfVars, vars, fs::copy_options::overwrite_existing);
      argv.insert(argv.end(), {"-drive", std::string("if=pflash,format=raw,readonly=on,file=") + kOvmfCode,
                               "-drive", "if=pflash,format=raw,file=" + vars.string()});
    }
    if (options.monitor) {
      m_monitor_path = (dir / "monitor.sock").string();
      argv.insert(argv.end(), {"-monitor", "unix:" + m_monitor_path + ",server,nowait"});
    } else {
      argv.insert(argv.end(), {"-monitor", "none"});
    }
    argv.insert(
        argv.end(),
        {"-object", "memory-backend-file,id=shm0,mem-path=" + m_shm->path() + ",size=1M,share=on", "-device",
         "ivshmem-plain,memdev=shm0", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"});
    argv.insert(argv.end(), options.qemu_args.begin(), options.qemu_args.end());
    std::vector<host::AttachedDisk> disks = options.attached;
    for (const auto& [index, image] : options.disks)
      disks.push_back({image, host::DiskInterface::Ide, index});
    const std::vector<std::string> drives =
        host::disk_arguments(options.machine, disks, options.drive_options);
    argv.insert(argv.end(), drives.begin(), drives.end());
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

  KernelState state() { return static_cast<KernelState>(std::atomic_ref<uint32_t>(control()->state).load()); }
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
  // The guest's 80x25 text screen, one string per row: VGA text memory (`pmemsave`), or under UEFI the
  // framebuffer console read back from a `screendump` through the kernel's own font.
  std::vector<std::string> screen(const fs::path& scratch) {
    if (m_framebuffer) return framebuffer_screen(scratch);
    const fs::path file = scratch / "screen.bin";
    fs::remove(file);
    monitor("pmemsave 0xb8000 4000 \"" + file.string() + "\"");  // quoted: the size is an expression
    const std::string cells = slurp(file);
    std::vector<std::string> rows;
    for (size_t row = 0; row < 25 && cells.size() >= 4000; ++row) {
      std::string text;
      for (size_t column = 0; column < 80; ++column) text += cells[(row * 80 + column) * 2];
      rows.push_back(text);
    }
    return rows;
  }
  void send_key(const std::string& key) { monitor("sendkey " + key); }
  // Presses Enter on the start screen until the capture starts. The start screen empties the keyboard buffer
  // before its serial line, so one press should do; pressing again is harmless, as Enter does nothing during
  // a capture.
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
  // Each cell's background is its top-left pixel (the font keeps column 0 blank); the pixels that differ
  // from it form the glyph, matched against the font. A cell matching no glyph reads as '\x01'.
  std::vector<std::string> framebuffer_screen(const fs::path& scratch) {
    const fs::path file = scratch / "screen.ppm";
    fs::remove(file);
    monitor("screendump \"" + file.string() + "\"");
    std::ifstream in(file, std::ios::binary);
    std::string magic;
    uint32_t width = 0, height = 0, maximum = 0;
    in >> magic >> width >> height >> maximum;
    in.get();
    using drivers::FramebufferText;
    if (magic != "P6" || maximum != 255 || width < FramebufferText::kGridWidth ||
        height < FramebufferText::kGridHeight)
      return {};
    std::vector<uint8_t> rgb(size_t{width} * height * 3);
    in.read(reinterpret_cast<char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
    if (!in) return {};
    auto pixel = [&](uint32_t x, uint32_t y) {
      const uint8_t* p = &rgb[(size_t{y} * width + x) * 3];
      return uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2];
    };
    const uint32_t x0 = FramebufferText::origin_x(width), y0 = FramebufferText::origin_y(height);
    std::vector<std::string> rows;
    for (uint32_t row = 0; row < FramebufferText::kRows; ++row) {
      std::string text;
      for (uint32_t column = 0; column < FramebufferText::kColumns; ++column) {
        const uint32_t cx = x0 + column * font::kWidth, cy = y0 + row * font::kHeight;
        const uint32_t background = pixel(cx, cy);
        font::Glyph seen{};
        for (uint32_t y = 0; y < font::kHeight; ++y)
          for (uint32_t x = 0; x < font::kWidth; ++x)
            if (pixel(cx + x, cy + y) != background) seen.rows[y] |= static_cast<uint8_t>(0x80 >> x);
        char found = '\x01';
        for (char c = font::kFirst; c <= font::kLast; ++c)
          if (std::equal(seen.rows, seen.rows + font::kHeight, font::glyph(c).rows)) found = c;
        text += found;
      }
      rows.push_back(text);
    }
    return rows;
  }

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
  bool m_framebuffer = false;
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

// A new trace disk of `size` made by `ett mkdisk`; returns its bytes.
inline std::string make_trace_disk(const fs::path& path, const std::string& size = "16M") {
  auto made = run_ett({"mkdisk", path.string(), "--size", size});
  EXPECT_EQ(made.exit_code, 0) << made.output;
  return slurp(path);
}

// `count` changes of probe 1, each one seen by the kernel before the next (two heartbeats apart).
inline void play_changes(QemuMachine& qemu, int count) {
  for (int i = 0; i < count; ++i) {
    qemu.set_lines(static_cast<uint8_t>((i % 15) + 1));
    const uint32_t beat = qemu.heartbeat();
    qemu.wait_until([&] { return qemu.heartbeat() - beat >= vprobe::kPaceBeats; }, 5);
  }
}

// Boots, plays `changes`, stops, and returns QEMU's exit status (-1: no exit).
inline int capture_and_stop(QemuMachine& qemu, int changes, double boot_seconds = 30) {
  if (!qemu.wait_state(KernelState::Capturing, boot_seconds)) return -1;
  play_changes(qemu, changes);
  qemu.request_stop();
  auto exit = qemu.wait_exit(60);
  return exit && exit->exited ? exit->status : -1;
}

// The extracted CSV of `trace` holds exactly the changes play_changes played: probe 1, codes 1..15 in turn,
// in order.
inline void expect_extracted(const fs::path& trace, int count) {
  auto extracted = run_ett({"extract", trace.string()});
  ASSERT_EQ(extracted.exit_code, 0) << extracted.output;
  std::istringstream rows(extracted.output);
  std::string row;
  int seen = 0;
  while (std::getline(rows, row)) {
    if (row.empty() || !std::isdigit(static_cast<unsigned char>(row[0]))) continue;
    const std::string expected_start = std::to_string(seen) + ",1," + std::to_string(seen % 15 + 1) + ",";
    EXPECT_EQ(row.rfind(expected_start, 0), 0u) << row;
    ++seen;
  }
  EXPECT_EQ(seen, count) << extracted.output;
}

}  // namespace ett::test
