// load_command.cpp: `ett load IMAGE`: bulk-loads decoded sessions into the trace database.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "db/loader.h"

namespace ett::cli {

namespace {

struct LoadOptions {
  std::string image;
  std::optional<uint32_t> session;
  bool all = false;
  std::string db = host::default_db_url();
};

// "\rsession 3 [##########          ]  52%  5.2M/10.0M events" on a terminal, redrawn at most 10 times a
// second.
// Ctrl-C while the bar is drawn: the shell's prompt must not land in the middle of it.
volatile std::sig_atomic_t g_bar_shown = 0;

void clear_bar_and_exit(int signal) {
  if (g_bar_shown) (void)!::write(STDERR_FILENO, "\r\033[K", 4);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

class ProgressBar {
 public:
  bool update(uint32_t session, uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - m_last < std::chrono::milliseconds(100)) return true;
    m_last = now;
    constexpr int kWidth = 30;
    const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
    std::fprintf(stderr, "\rsession %u [%s%s] %3d%%  %.1fM/%.1fM events", session,
                 std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(),
                 total ? static_cast<int>(100 * done / total) : 100, done / 1e6, total / 1e6);
    m_shown = true;
    g_bar_shown = 1;
    return true;
  }
  void clear() {
    if (m_shown) std::fprintf(stderr, "\r\033[K");
    m_shown = false;
    g_bar_shown = 0;
  }

 private:
  std::chrono::steady_clock::time_point m_last{};
  bool m_shown = false;
};

int run_load(const LoadOptions& options) {
  using namespace ett::host;
  ProgressBar bar;
  SessionProgress progress;
  if (::isatty(STDERR_FILENO) && !quiet()) {
    std::signal(SIGINT, clear_bar_and_exit);
    std::signal(SIGTERM, clear_bar_and_exit);
  }
  if (::isatty(STDERR_FILENO) && !quiet())
    progress = [&bar](uint32_t session, uint64_t done, uint64_t total) {
      return bar.update(session, done, total);
    };
  const LoadRequest request{options.image, options.session, options.all};
  auto loaded = load_into(options.db, request, progress);
  bar.clear();
  if (!loaded) return report(loaded.error());
  int status = 0;
  for (const LoadedSession& session : *loaded) {
    if (!session.skipped.empty()) {
      warn(fmt::format("session {} skipped: {}", session.session, session.skipped));
      status = 1;
    } else if (session.already_loaded && !session.repaired.empty()) {
      std::printf("session %u of %s was loaded as trace %lld, but %s: its %llu events were loaded again\n",
                  session.session, options.image.c_str(), static_cast<long long>(session.trace_id),
                  session.repaired.c_str(), static_cast<unsigned long long>(session.events));
    } else if (session.already_loaded) {
      std::printf("session %u of %s is already loaded as trace %lld: nothing changed\n", session.session,
                  options.image.c_str(), static_cast<long long>(session.trace_id));
    } else {
      std::printf("session %u of %s loaded as trace %lld: %llu events%s in %.2f s (%.2f M events/s)\n",
                  session.session, options.image.c_str(), static_cast<long long>(session.trace_id),
                  static_cast<unsigned long long>(session.events),
                  session.health == "ok" ? "" : (" (" + session.health + ")").c_str(), session.seconds,
                  session.seconds > 0 ? session.events / session.seconds / 1e6 : 0.0);
    }
  }
  return status;
}

}  // namespace

Command add_load_command(CLI::App& app) {
  auto options = std::make_shared<LoadOptions>();
  CLI::App* sub = app.add_subcommand("load", "Load decoded sessions into the trace database");
  sub->add_option("IMAGE", options->image, "Trace disk image file or block device")->required();
  auto* session = sub->add_option("--session", options->session, "Session number (default: the newest)");
  sub->add_flag("--all", options->all, "Every session on the disk")->excludes(session);
  add_db_option(sub, options->db);
  sub->footer(
      "Each session is loaded in one transaction, identified by disk UUID, session number and a hash of its "
      "contents: loading it again changes nothing, and an interrupted load leaves nothing behind.");
  return {sub, [options] { return run_load(*options); }};
}

}  // namespace ett::cli
