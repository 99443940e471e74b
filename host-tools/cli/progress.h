// progress.h: the one progress line on standard error of the verbs that can run for seconds (load, synth,
// extract, export, report), and what Ctrl-C does to them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace ett::cli {

// While a Progress lives, SIGINT and SIGTERM are taken by its thread (sigtimedwait), which is also the only
// one that draws: a signal can never land in the middle of a line being drawn. The line is drawn only when
// standard error is a terminal and -q was not given, redrawn at most 10 times a second, and cut to the
// terminal's width (a wrapped line could not be erased with \r).
//
// On Ctrl-C the line is erased first. Then a cooperative verb (load) sees interrupted() and stops at its next
// step, undoing what it did; any other verb ends at once with status 130 (143 for SIGTERM), after removing
// the output file it was writing (remove_on_interrupt). A second Ctrl-C always ends the run at once.
class Progress {
 public:
  explicit Progress(std::string verb);  // "load": the line reads "ett load: ..."
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();  // erases the line and gives the signals back

  // What is being done now ("reading trace 3"); resets the count.
  void phase(const std::string& text);
  // How far: a bar when total > 0 ("[#####     ]  52%  5.2M/10.0M events").
  void count(uint64_t done, uint64_t total, const std::string& unit = "events");
  // Shows the size of this file as it grows (an export written to a file).
  void watch_file(const std::string& path);
  // The verb writes its data to standard output: when that is the terminal too, no line is drawn (it would
  // land in the middle of the data).
  void data_to_stdout();
  // A file this run is creating: removed when Ctrl-C ends the run before keep().
  void remove_on_interrupt(const std::string& path);
  void keep();
  // Ctrl-C only sets interrupted(): the verb checks it and cleans up itself.
  void cooperative();
  bool interrupted() const { return m_interrupted.load(); }
  // Erases the line now (before results or messages are printed); it is drawn again only after the next
  // phase() or count().
  void erase();

  // Erases the line of the live Progress, if any (warn() and note() call it before they print).
  static void erase_current();

 private:
  void run();
  void draw_locked();
  void erase_locked();
  std::string line_locked() const;

  const std::string m_verb;
  bool m_draw;
  std::mutex m_mutex;  // the fields below and standard error
  std::string m_phase;
  uint64_t m_done = 0, m_total = 0;
  std::string m_unit;
  std::string m_watched;
  std::string m_remove;
  bool m_shown = false;
  bool m_paused = false;  // erased, until the next update
  bool m_cooperative = false;
  std::atomic<bool> m_interrupted{false};
  std::atomic<bool> m_stop{false};
  const std::chrono::steady_clock::time_point m_start;
  std::thread m_thread;
};

}  // namespace ett::cli
