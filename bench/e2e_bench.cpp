// e2e_bench.cpp: `ett_e2e_bench [EVENTS [FILTER]]` (part of `make bench`; FILTER: only the commands whose
// name holds it, e.g. "export"): every `ett analyze` and `ett export` run end to end through the ett binary
// (database file to result) over a synthetic trace of 10 million events in SQLite and in PostgreSQL, with its
// wall time, its peak memory and the ratio to a plain full scan of the same SQLite file by the sqlite3 shell
// in the same run. A command that writes a file (the exports, align's timeline) also prints its size and the
// write floor: the time to write that many bytes to a new file in the same directory, which no formatting can
// go below. Each command runs twice in a
// row: the second run gets the memory the first one just freed, which on a virtual machine whose host takes
// back the guest's free memory is far cheaper to touch than memory left free for a while.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "export/output_file.h"
#include "machine.h"
#include "support/pg_server.h"

namespace {

using namespace ett::host;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Thrown, so that the throwaway PostgreSQL server and the temporary directory are cleaned up on the way out.
[[noreturn]] void die(const std::string& message) {
  throw std::runtime_error(message);
}

struct Measured {
  double wall = 0;     // seconds
  double cpu = 0;      // user + system seconds of the process (its threads together)
  double peak_mb = 0;  // maximum resident set size (what /usr/bin/time -v reports), 10^6 bytes
};

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// Runs a program (no shell) with standard output to /dev/null; its wall time and peak memory from wait4().
Measured run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);  // or the child would write our buffered lines again
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) die("fork failed");
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    ::execvp(args[0], args.data());
    std::_Exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) die("wait4 failed");
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string command;
    for (const std::string& arg : argv) command += (command.empty() ? "" : " ") + arg;
    die("failed: " + command);
  }
  return {wall, seconds(usage.ru_utime) + seconds(usage.ru_stime),
          static_cast<double>(usage.ru_maxrss) * 1024 / 1e6};
}

// Seconds to write `bytes` bytes to a new file in `dir` in 1 MB pieces through ett's own output path
// (TextOut: past the page cache, or written behind where the file system cannot do that), and close it.
double write_floor(const fs::path& dir, uintmax_t bytes) {
  const fs::path path = dir / "write-floor.out";
  const std::string block(size_t{1} << 20, 'x');
  const auto start = Clock::now();
  auto out = TextOut::open(path.string(), true);
  if (!out) die(out.error().message);
  for (uintmax_t done = 0; done < bytes; done += block.size())
    out->append(std::string_view(block).substr(
        0, static_cast<size_t>(std::min<uintmax_t>(block.size(), bytes - done))));
  if (auto finished = out->finish(); !finished) die(finished.error().message);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::error_code ignored;
  fs::remove(path, ignored);
  return seconds;
}

// One `ett` command line of the benchmark (--db is added); {out} stands for an output file.
struct Case {
  const char* name;
  std::vector<std::string> args;
};

std::vector<Case> cases(const std::string& sizes) {
  return {
      {"analyze durations", {"analyze", "durations", "--from", "1", "--to", "2"}},
      {"analyze durations --fit",
       {"analyze", "durations", "--from", "1", "--to", "2", "--size-of-code", sizes, "--fit", "linear"}},
      {"analyze intervals", {"analyze", "intervals", "--tau-ns", "1000"}},
      {"analyze histogram code", {"analyze", "histogram", "--by", "code"}},
      {"analyze histogram probe", {"analyze", "histogram", "--by", "probe", "--match", "XXXX1XXX"}},
      {"analyze histogram time", {"analyze", "histogram", "--by", "time:1ms", "--max-buckets", "1000000"}},
      // The align database; csv and json write the merged timeline of all its events.
      {"analyze align", {"analyze", "align", "--traces", "1,2", "--sync", "1"}},
      {"analyze align csv",
       {"analyze", "align", "--traces", "1,2", "--sync", "1", "--format", "csv", "-o", "{out}"}},
      {"analyze align json",
       {"analyze", "align", "--traces", "1,2", "--sync", "1", "--format", "json", "-o", "{out}"}},
      {"export vcd", {"export", "--format", "vcd", "-o", "{out}"}},
      {"export perfetto", {"export", "--format", "perfetto", "--from", "1", "--to", "2", "-o", "{out}"}},
      {"export perfetto-proto",
       {"export", "--format", "perfetto-proto", "--from", "1", "--to", "2", "-o", "{out}"}},
      {"export csv", {"export", "--format", "csv", "-o", "{out}"}},
      // Last: it relabels trace 1 as a calibration capture first (Bench::run_all) and stores its result.
      {"analyze precision", {"analyze", "precision"}},
  };
}

// The databases of one engine: `main` holds the EVENTS-event trace alone, `align` the two EVENTS/2-event
// traces; with the SQLite files of the same traces, which the sqlite3 scan reads.
struct Databases {
  std::string main, align;
  std::string main_file, align_file;
};

// The sqlite3 shell's plain full scan of a file (page cache warm).
Measured sqlite_scan(const std::string& file) {
  return run({"sqlite3", file, "select count(*), sum(tsc), sum(code), sum(probe) from events"});
}

class Bench {
 public:
  Bench(std::string ett, std::string filter) : m_ett(std::move(ett)), m_filter(std::move(filter)) {}

  // Every case against one engine's databases; `reference` (SQLite's rows) adds the ratio to them.
  std::vector<Measured> run_all(const std::string& engine, const Databases& dbs, const fs::path& dir,
                                const std::string& sizes, const std::vector<Measured>* reference) {
    std::vector<Measured> rows;
    const std::vector<Case> all = cases(sizes);
    for (size_t i = 0; i < all.size(); ++i) {
      const Case& c = all[i];
      if (std::string(c.name).find(m_filter) == std::string::npos) {
        rows.push_back({});
        continue;
      }
      const bool align = std::string(c.name).starts_with("analyze align");
      const std::string& db = align ? dbs.align : dbs.main;
      if (std::string(c.name) == "analyze precision") relabel_calibrate(db);
      const fs::path out = dir / "export.out";
      std::vector<std::string> argv{m_ett};
      for (const std::string& arg : c.args) argv.push_back(arg == "{out}" ? out.string() : arg);
      argv.push_back("--db");
      argv.push_back(db);
      if (std::find(c.args.begin(), c.args.end(), "{out}") != c.args.end()) argv.push_back("--force");
      // No dirty pages of the case before (its output, its write floor, a load) written back during this one.
      ::sync();
      // The yardstick in the same minute as the case, on a machine whose load changes from one minute to
      // the next: the faster of a scan just before the case and one just after it.
      const std::string& file = align ? dbs.align_file : dbs.main_file;
      const Measured before = sqlite_scan(file);
      const Measured m = run(argv);
      std::error_code ignored;
      fs::remove(out, ignored);
      const Measured again = run(argv);  // right after: in the memory the first run freed
      const Measured after = sqlite_scan(file);
      const Measured& scan = before.wall <= after.wall ? before : after;
      const uintmax_t bytes = fs::exists(out) ? fs::file_size(out) : 0;
      fs::remove(out, ignored);
      rows.push_back(m);
      std::printf("%-11s %-26s %8.2f %8.2f %9.0f %9.2f %8.2f %8.2f %9.2f %8.2f", engine.c_str(), c.name,
                  m.wall, m.cpu, m.peak_mb, scan.wall, m.wall / scan.wall, m.cpu / scan.cpu, again.wall,
                  again.wall / scan.wall);
      if (bytes) {
        const double floor = write_floor(dir, bytes);
        std::printf(" %9.0f %9.2f %8.2f", static_cast<double>(bytes) / 1e6, floor, floor / scan.wall);
      } else {
        std::printf(" %9s %9s %8s", "-", "-", "-");
      }
      if (reference) std::printf(" %9.2f", m.wall / (*reference)[i].wall);
      std::printf("\n");
      std::fflush(stdout);
    }
    return rows;
  }

 private:
  // The synthetic trace stands in for a mode=calibrate capture: precision reads the TSC steps of any trace.
  void relabel_calibrate(const std::string& db) {
    run({m_ett, "sql", "--db", db, "UPDATE traces SET mode = 'calibrate' WHERE trace_id = 1"});
  }

  std::string m_ett;
  std::string m_filter;  // only the commands whose name holds it
};

}  // namespace

int run_bench(int argc, char** argv) {
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  if (events < 10) die("EVENTS must be at least 10");
  std::string pattern = (fs::temp_directory_path() / "ett-e2e-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) die("mkdtemp failed");
  const fs::path dir = pattern;
  struct RemoveDir {
    fs::path dir;
    ~RemoveDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_dir{dir};
  const std::string ett = std::string(ETT_BIN_DIR) + "/ett";
  const std::string count = fmt::format("{}", events), half = fmt::format("{}", events / 2);
  std::printf("ett_e2e_bench: %s synthetic events (ett synth --seed 1), in %s; load average %s\n",
              count.c_str(), dir.c_str(), ett::bench::load_average().c_str());
  std::printf("%s\n", ett::bench::fresh_memory_line().c_str());

  // The main database: one trace of EVENTS events. The align database: the same EVENTS/2 events on two disks
  // (align's input: every sync edge on both), the second stamped by a clock 50 ppm fast (a crystal's
  // tolerance: its fit and every reference time are computed, none is the identity), EVENTS events in all.
  const std::string main_image = (dir / "trace.img").string();
  const std::string half_a = (dir / "half_a.img").string(), half_b = (dir / "half_b.img").string();
  run({ett, "synth", "--events", count, main_image});
  run({ett, "synth", "--events", half, half_a});
  run({ett, "synth", "--events", half, "--clock-ppm", "50", half_b});
  auto load = [&](const Databases& dbs) {
    run({ett, "load", "--db", dbs.main, main_image});
    for (const std::string& image : {half_a, half_b}) run({ett, "load", "--db", dbs.align, image});
  };
  const std::string main_file = (dir / "ett.db").string(), align_file = (dir / "align.db").string();
  Databases sqlite_dbs{"sqlite:" + main_file, "sqlite:" + align_file, main_file, align_file};
  load(sqlite_dbs);
  for (const std::string& file : {main_file, align_file}) sqlite_scan(file);  // the page cache warm
  std::printf(
      "yardstick (scan): sqlite3 DB \"select count(*), sum(tsc), sum(code), sum(probe) from events\" on the "
      "SQLite file of the same events, the faster of a run just before and one just after each command\n");
  std::printf("%-11s %-26s %8s %8s %9s %9s %8s %8s %9s %8s %9s %9s %8s %9s\n", "engine", "command",
              "wall (s)", "cpu (s)", "peak (MB)", "scan (s)", "x scan", "cpu x", "again (s)", "a x scan",
              "out (MB)", "write (s)", "w x scan", "x SQLite");

  std::string sizes;
  for (int code = 1; code <= 15; ++code)
    sizes += fmt::format("{}{}={}", code > 1 ? "," : "", code, 16 * code);
  Bench bench(ett, argc > 2 ? argv[2] : "");
  const std::vector<Measured> sqlite = bench.run_all("SQLite", sqlite_dbs, dir, sizes, nullptr);

  // PostgreSQL: a throwaway server (fsync off, unix socket) as the database tests use, a database for each
  // SQLite file; skipped without PostgreSQL. Its ratios are to the same sqlite3 scans.
  auto server = ThrowawayPostgres::start();
  if (!server) {
    std::printf("PostgreSQL skipped: %s\n", server.error().message.c_str());
  } else {
    run({ett, "sql", "--db", server->uri(), "CREATE DATABASE align"});
    std::string align_uri = server->uri();
    align_uri.replace(align_uri.find("/postgres?"), 10, "/align?");
    const Databases pg_dbs{server->uri(), align_uri, main_file, align_file};
    load(pg_dbs);
    // Before the first case: the loaded tables vacuumed (or autovacuum, which PostgreSQL starts after many
    // inserts, would do it during a case), their pages written out (a checkpoint), and one full read of the
    // events, as the SQLite files had (the first PostgreSQL case took 1.5x its repeat without these).
    for (const std::string& db : {pg_dbs.main, pg_dbs.align}) {
      run({ett, "sql", "--db", db, "VACUUM ANALYZE"});
      run({ett, "sql", "--db", db, "CHECKPOINT"});
      run({ett, "sql", "--db", db, "SELECT count(*), sum(tsc), sum(code), sum(probe) FROM events"});
    }
    bench.run_all("PostgreSQL", pg_dbs, dir, sizes, &sqlite);
  }
  std::printf(
      "(cpu: user + system time of the ett process, all its threads; peak: its maximum resident set size, "
      "as /usr/bin/time -v reports it; x scan: wall time / the scan's; cpu x: cpu time / the scan's; "
      "again: the wall time of the same command run again right after, and a x scan: it / the scan's; "
      "out: the size of the file an export or align's timeline writes; write: the write floor, seconds to "
      "write that many bytes to a new "
      "file in the same directory in 1 MB pieces through ett's own output path, and w x scan: it / the "
      "scan's; x SQLite: wall time / "
      "the same command's on SQLite; load average at the end %s)\n",
      ett::bench::load_average().c_str());
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ett_e2e_bench: %s\n", error.what());
    return 1;
  }
}
