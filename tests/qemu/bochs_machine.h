// bochs_machine.h: boot tests on Bochs (Debian's bochs 2.7), a PC emulator written apart from QEMU: its own
// BIOS, timers (PIT, HPET, ACPI PM timer), IDE and parallel port. Debian's build has its debugger and no
// `nogui` display: Bochs runs with the `term` display under `script`'s pseudo-terminal and a debugger command
// file holding `c`. The terminal output is kept and replayed to read the text screen.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "qemu_direct.h"  // make_test_iso, make_trace_disk

namespace ett::test {

// Whether `text` (a serial log, ett's output) holds `part`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct BochsOptions {
  fs::path iso;                       // boots this CD (GRUB, multiboot2) on the primary master
  fs::path disk;                      // a flat image of 64 MiB on the primary slave (none when empty)
  std::string cpu = "ips=200000000";  // the `cpu:` line: guest TSC rate = ips (clock: sync=none)
  bool parport = false;               // LPT1 at 0x378, output to a file
  bool com2 = false;                  // COM2 at 0x2f8 (a 16550A), connected to nothing
};

// The bytes a terminal of `rows` x `cols` was sent, replayed into its text: cursor addressing, erasing,
// carriage return, line feed and backspace (TERM=vt100); other sequences (colours, modes) are skipped.
inline std::vector<std::string> replay_terminal(const std::string& bytes, int rows = 25, int cols = 80) {
  std::vector<std::string> screen(rows, std::string(cols, ' '));
  int row = 0;
  int col = 0;
  auto clamp = [&] {
    row = std::clamp(row, 0, rows - 1);
    col = std::clamp(col, 0, cols - 1);
  };
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\x1b' && i + 1 < bytes.size() && bytes[i + 1] == '[') {
      size_t j = i + 2;
      std::vector<int> params{0};
      while (j < bytes.size() &&
             (std::isdigit(static_cast<unsigned char>(bytes[j])) || bytes[j] == ';' || bytes[j] == '?')) {
        if (bytes[j] == ';') params.push_back(0);
        if (std::isdigit(static_cast<unsigned char>(bytes[j])))
          params.back() = params.back() * 10 + (bytes[j] - '0');
        ++j;
      }
      if (j >= bytes.size()) break;
      const int first = params[0];
      switch (bytes[j]) {
        case 'H':
        case 'f':
          row = std::max(first, 1) - 1;
          col = params.size() > 1 ? std::max(params[1], 1) - 1 : 0;
          break;
        case 'A':
          row -= std::max(first, 1);
          break;
        case 'B':
          row += std::max(first, 1);
          break;
        case 'C':
          col += std::max(first, 1);
          break;
        case 'D':
          col -= std::max(first, 1);
          break;
        case 'J':
          if (first == 2) {
            for (auto& line : screen) line.assign(cols, ' ');
          } else if (first == 0) {
            screen[row].replace(col, cols - col, cols - col, ' ');
            for (int r = row + 1; r < rows; ++r) screen[r].assign(cols, ' ');
          }
          break;
        case 'K':
          if (first == 0) screen[row].replace(col, cols - col, cols - col, ' ');
          if (first == 2) screen[row].assign(cols, ' ');
          break;
        default:
          break;  // colours (m), modes (h, l), scroll region (r): no change to the text
      }
      clamp();
      i = j;
    } else if (c == '\x1b') {
      if (i + 1 < bytes.size() && (bytes[i + 1] == '(' || bytes[i + 1] == ')')) ++i;  // character set
      ++i;
    } else if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      row = std::min(row + 1, rows - 1);
    } else if (c == '\b') {
      col = std::max(col - 1, 0);
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      screen[row][col] = c;
      if (col < cols - 1) ++col;
    }
  }
  return screen;
}

// One Bochs run in `dir`: started by the constructor, ended (its whole process group killed and every
// process of it reaped) by stop() or the destructor. The test process becomes a child subreaper, so Bochs
// is reaped here even when `script` exits first (PID 1 of a container may not reap).
class BochsMachine {
 public:
  BochsMachine(const fs::path& dir, const BochsOptions& options) : m_dir(dir) {
    std::ofstream rc(dir / "bochsrc");
    rc << "megs: 256\n"
          "romimage: file=/usr/share/bochs/BIOS-bochs-latest\n"
          "vgaromimage: file=/usr/share/bochs/VGABIOS-lgpl-latest\n"
          "ata0-master: type=cdrom, path="
       << options.iso.string() << ", status=inserted\n";
    if (!options.disk.empty()) {
      rc << "ata0-slave: type=disk, path=" << options.disk.string()
         << ", mode=flat, cylinders=130, heads=16, spt=63\n";
    }
    rc << "boot: cdrom\n"
          "com1: enabled=1, mode=file, dev="
       << serial_path().string() << "\n";
    if (options.parport) rc << "parport1: enabled=1, file=\"" << (dir / "lpt.out").string() << "\"\n";
    if (options.com2) rc << "com2: enabled=1, mode=null\n";
    rc << "display_library: term\n"
          "cpu: "
       << options.cpu
       << "\n"
          "clock: sync=none\n"
          "log: "
       << (dir / "bochs.log").string() << "\n";
    rc.close();
    std::ofstream(dir / "cmds") << "c\n";  // continue: Debian's build starts in its debugger
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    m_start = std::chrono::steady_clock::now();
    m_pid = ::fork();
    if (m_pid == 0) {
      ::setsid();  // its own process group: stop() ends script and bochs together
      if (::chdir(dir.c_str()) != 0) ::_exit(127);
      std::FILE* in = std::freopen("/dev/null", "r", stdin);
      std::FILE* out = std::freopen((dir / "term.out").c_str(), "w", stdout);
      std::FILE* err = std::freopen("/dev/null", "w", stderr);
      if (in == nullptr || out == nullptr || err == nullptr) ::_exit(127);
      ::setenv("TERM", "vt100", 1);  // a small set of escape sequences for replay_terminal
      ::setenv("LINES", "25", 1);
      ::setenv("COLUMNS", "80", 1);
      ::execlp("script", "script", "-qfc", "bochs -q -f bochsrc -rc cmds", "/dev/null", nullptr);
      ::_exit(127);
    }
    m_screen_reader = std::thread([this] { read_screen(); });
  }
  ~BochsMachine() { stop(); }
  BochsMachine(const BochsMachine&) = delete;
  BochsMachine& operator=(const BochsMachine&) = delete;

  fs::path serial_path() const { return m_dir / "serial.txt"; }
  std::string serial() const { return slurp(serial_path()); }
  bool running() const { return m_pid > 0; }

  // Waits until the serial log holds `text` (true) or `seconds` pass (false).
  bool wait_serial(const std::string& text, double seconds) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (serial().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return serial().find(text) != std::string::npos;
  }

  // The text screen as the term display shows it now (25 rows of 80 columns).
  std::vector<std::string> screen() const {
    std::lock_guard lock(m_screen_mutex);
    return replay_terminal(m_screen_bytes);
  }

  // Waits until row `row` of the screen holds `text`.
  bool wait_screen(int row, const std::string& text, double seconds) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      if (screen()[row].find(text) != std::string::npos) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Seconds since the start (host time).
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }

  // Ends the run: SIGTERM to `script` and to Bochs (a session of its own under script's terminal), SIGKILL
  // after 5 s, and both reaped: Bochs by script, or here once script is gone (this process is a subreaper).
  void stop() {
    m_stopping = true;
    if (m_screen_reader.joinable()) m_screen_reader.join();
    if (m_pid <= 0) return;
    std::vector<pid_t> left = children_of(m_pid);
    ::kill(-m_pid, SIGTERM);
    for (const pid_t child : left) ::kill(child, SIGTERM);
    left.push_back(m_pid);
    const auto force = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    bool killed = false;
    while (!left.empty()) {
      std::erase_if(left, [](pid_t pid) {
        int status = 0;
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        // ECHILD and no /proc entry: reaped by its own parent; ECHILD with one: not yet handed to this
        // process.
        return done == pid || (done < 0 && errno == ECHILD && !fs::exists("/proc/" + std::to_string(pid)));
      });
      if (!killed && std::chrono::steady_clock::now() > force) {
        for (const pid_t pid : left) ::kill(pid, SIGKILL);
        killed = true;
      }
      if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    m_pid = -1;
  }

 private:
  // The processes whose parent is `parent` (from /proc).
  static std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
      const std::string stat = slurp(entry.path() / "stat");
      const size_t close = stat.rfind(')');  // "pid (comm) state ppid ..."; comm may hold spaces
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 1));
      std::string state;
      long ppid = 0;
      if (rest >> state >> ppid && ppid == parent) children.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return children;
  }

  // Finds the term display's terminal in the output of `script`, opens it raw and keeps what arrives.
  void read_screen() {
    const std::string marker = "connected to screen \"";
    int fd = -1;
    while (!m_stopping) {
      if (fd < 0) {
        const std::string out = slurp(m_dir / "term.out");
        const size_t at = out.find(marker);
        const size_t end = at == std::string::npos ? at : out.find('"', at + marker.size());
        if (end == std::string::npos) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        const std::string tty = out.substr(at + marker.size(), end - at - marker.size());
        fd = ::open(tty.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) return;
        termios mode{};
        if (::tcgetattr(fd, &mode) == 0) {
          ::cfmakeraw(&mode);
          ::tcsetattr(fd, TCSANOW, &mode);
        }
      }
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      char buffer[4096];
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got > 0) {
        std::lock_guard lock(m_screen_mutex);
        m_screen_bytes.append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // Bochs has closed its side
      }
    }
    if (fd >= 0) ::close(fd);
  }

  fs::path m_dir;
  pid_t m_pid = -1;
  std::thread m_screen_reader;
  std::atomic<bool> m_stopping = false;
  mutable std::mutex m_screen_mutex;
  std::string m_screen_bytes;
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace ett::test
