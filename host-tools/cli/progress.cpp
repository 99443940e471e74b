// progress.cpp: the progress line on standard error and the Ctrl-C handling of the long-running verbs.
#include "progress.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ctime>

#include "commands.h"
#include "common/interrupt.h"

namespace ett::cli {

namespace {

std::atomic<Progress*> g_current{nullptr};

// SIGUSR1 only wakes the thread when the Progress ends.
sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

void write_all(const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t wrote = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (wrote <= 0) return;
    done += static_cast<size_t>(wrote);
  }
}

std::string size_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.0f} kB", bytes / 1e3);
}

// Not before this: a verb done sooner never draws a line that would only flash.
constexpr auto kFirstDraw = std::chrono::milliseconds(300);
constexpr long kTickNs = 100'000'000;

}  // namespace

Progress::Progress(std::string verb)
    : m_verb(std::move(verb)),
      m_draw(::isatty(STDERR_FILENO) && !quiet()),
      m_start(std::chrono::steady_clock::now()) {
  const sigset_t set = handled_signals();
  // Blocked here before the thread starts: it and every thread started later inherit the mask, so the
  // signals stay pending until the Progress thread takes them.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  g_current = this;
  m_thread = std::thread([this] { run(); });
}

Progress::~Progress() {
  m_stop = true;
  pthread_kill(m_thread.native_handle(), SIGUSR1);
  m_thread.join();
  g_current = nullptr;
  {
    std::lock_guard lock(m_mutex);
    erase_locked();
  }
  const sigset_t set = handled_signals();
  // A Ctrl-C the verb already acted on (interrupted()) was taken by the thread; nothing is pending.
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void Progress::phase(const std::string& text) {
  std::lock_guard lock(m_mutex);
  m_phase = text;
  m_done = m_total = 0;
  m_paused = false;
}

void Progress::count(uint64_t done, uint64_t total, const std::string& unit) {
  std::lock_guard lock(m_mutex);
  m_done = done;
  m_total = total;
  m_unit = unit;
  m_paused = false;
}

void Progress::watch_file(const std::string& path) {
  std::lock_guard lock(m_mutex);
  m_watched = path == "-" ? "" : path;
}

void Progress::data_to_stdout() {
  std::lock_guard lock(m_mutex);
  if (::isatty(STDOUT_FILENO)) m_draw = false;
}

void Progress::remove_on_interrupt(const std::string& path) {
  std::lock_guard lock(m_mutex);
  m_remove = path;
}

void Progress::keep() {
  std::lock_guard lock(m_mutex);
  m_remove.clear();
}

void Progress::cooperative() {
  std::lock_guard lock(m_mutex);
  m_cooperative = true;
}

void Progress::erase() {
  std::lock_guard lock(m_mutex);
  erase_locked();
  m_paused = true;
}

void Progress::erase_current() {
  if (Progress* progress = g_current.load()) progress->erase();
}

void Progress::erase_locked() {
  if (m_shown) write_all("\r\033[K");
  m_shown = false;
}

std::string Progress::line_locked() const {
  std::string line = "ett " + m_verb + ": " + m_phase;
  if (m_total > 0) {
    constexpr uint64_t kWidth = 30;
    const uint64_t done = std::min(m_done, m_total);
    const uint64_t filled = kWidth * done / m_total;
    line += fmt::format(" [{}{}] {:3}%  {:.1f}M/{:.1f}M {}", std::string(filled, '#'),
                        std::string(kWidth - filled, ' '), 100 * done / m_total,
                        static_cast<double>(done) / 1e6, static_cast<double>(m_total) / 1e6, m_unit);
  } else if (m_done > 0) {
    line += fmt::format("  {:.1f}M {}", static_cast<double>(m_done) / 1e6, m_unit);
  }
  struct stat st {};
  if (!m_watched.empty() && ::stat(m_watched.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    line += "  " + size_text(static_cast<double>(st.st_size));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  line += fmt::format("  {:.0f} s", seconds);
  // One row of the terminal: a line that wraps cannot be erased with \r.
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && line.size() >= size.ws_col)
    line.resize(size.ws_col - 1);
  return line;
}

void Progress::draw_locked() {
  if (!m_draw || m_paused || m_interrupted || std::chrono::steady_clock::now() - m_start < kFirstDraw) return;
  write_all("\r" + line_locked() + "\033[K");
  m_shown = true;
}

void Progress::run() {
  const sigset_t set = handled_signals();
  const timespec tick{0, kTickNs};
  while (!m_stop) {
    const int signal = sigtimedwait(&set, nullptr, &tick);
    if (m_stop) return;
    std::lock_guard lock(m_mutex);
    if (signal == SIGINT || signal == SIGTERM) {
      erase_locked();
      host::note_interrupt(signal);
      if (m_cooperative && !m_interrupted) {
        m_interrupted = true;  // the verb stops at its next step and cleans up
        continue;
      }
      if (!m_remove.empty()) ::unlink(m_remove.c_str());
      host::exit_on_signal(signal);
    }
    draw_locked();
  }
}

}  // namespace ett::cli
