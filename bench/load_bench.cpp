// load_bench.cpp: `ett_load_bench [EVENTS]`: events/s of `ett load` into SQLite and PostgreSQL for a
// synthetic capture (default 10 million events), next to the sqlite3 shell's .import of the same events as
// CSV. Wall time is what a user waits; CPU time is printed next to it because on a shared machine the wall
// time measures the other processes as much as the load.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "db/loader.h"
#include "image/synth.h"
#include "machine.h"
#include "support/pg_server.h"

namespace {

using namespace ett::host;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "ett_load_bench: %s\n", message.c_str());
  std::exit(1);
}

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
}

// User + system CPU seconds of this process (RUSAGE_SELF) or of its waited-for children.
double cpu_seconds(int who) {
  rusage usage{};
  ::getrusage(who, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// User + system CPU seconds of another process (the PostgreSQL backend serving our connection), from /proc.
double process_cpu_seconds(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t after_name = stat.rfind(')');
  if (after_name == std::string::npos) return 0;
  std::istringstream fields(stat.substr(after_name + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state; utime and stime are fields 14 and 15
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds of the whole PostgreSQL server whose data directory is `data`: the postmaster, its children
// that exited (waited for: cutime + cstime) and those still running (every backend a load uses).
double server_cpu_seconds(const std::string& data) {
  std::ifstream pid_file(data + "/postmaster.pid");
  long postmaster = 0;
  pid_file >> postmaster;
  auto stat_fields = [](long pid) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<unsigned long long> fields;
    const size_t after_name = stat.rfind(')');
    if (after_name == std::string::npos) return fields;
    std::istringstream rest(stat.substr(after_name + 2));
    std::string field;
    while (rest >> field) fields.push_back(std::strtoull(field.c_str(), nullptr, 10));
    return fields;  // [0] is field 3 (state), [1] the parent, [11..14] utime, stime, cutime, cstime
  };
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double total = 0;
  if (auto own = stat_fields(postmaster); own.size() > 14)
    total += (own[11] + own[12] + own[13] + own[14]) / tick;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto fields = stat_fields(std::stol(name));
    if (fields.size() > 12 && static_cast<long>(fields[1]) == postmaster)
      total += (fields[11] + fields[12]) / tick;
  }
  return total;
}

// Writes back what earlier cases left dirty in the page cache (their database files, the CSV), so that no
// case pays for another's writes.
void settle() {
  ::sync();
}

// Runs a shell command; returns its wall time and adds its CPU time to `cpu`.
double shell(const std::string& command, double& cpu) {
  settle();
  const double children_before = cpu_seconds(RUSAGE_CHILDREN);
  const auto start = Clock::now();
  const int status = std::system(command.c_str());
  if (status != 0) die("failed: " + command);
  const double wall = seconds_since(start);
  cpu += cpu_seconds(RUSAGE_CHILDREN) - children_before;
  return wall;
}

void row(const std::string& what, uint64_t events, double wall, double cpu) {
  std::printf("%-50s %7.2f s %6.2f M events/s   cpu %6.2f s %6.2f M events/cpu-s\n", what.c_str(), wall,
              events / wall / 1e6, cpu, cpu > 0 ? events / cpu / 1e6 : 0.0);
}

struct Timed {
  double wall = 0;
  double cpu = 0;
};

// Opens `url`, loads the image's newest session; the database part (LoadedSession::seconds) and the whole.
struct LoadTimes {
  Timed database;  // cpu: ours in the database part; PostgreSQL's own work is in `server_cpu`
  Timed total;
  double server_cpu = 0;
};

LoadTimes timed_load(const std::string& url, const std::string& image, bool postgres,
                     const std::string& pg_data = {}) {
  LoadTimes times;
  auto db = open_database(url);
  if (!db) die(db.error().message);
  long backend = 0;
  if (postgres) {
    auto pid = (*db)->query("SELECT pg_backend_pid()", {});
    if (!pid) die(pid.error().message);
    backend = std::stol(pid->rows.at(0).at(0).value());
  }
  // The whole server when its directory is known: a load may use more than one backend.
  auto server_cpu = [&] {
    return !pg_data.empty() ? server_cpu_seconds(pg_data) : process_cpu_seconds(backend);
  };
  settle();
  const double server_before = backend ? server_cpu() : 0;
  const double cpu_before = cpu_seconds(RUSAGE_SELF);
  const auto start = Clock::now();
  auto loaded = load_image(**db, {image, std::nullopt, false});
  if (!loaded) die(loaded.error().message);
  times.total = {seconds_since(start), cpu_seconds(RUSAGE_SELF) - cpu_before};
  times.database = {(*loaded)[0].seconds, (*loaded)[0].cpu_seconds};
  if (backend) times.server_cpu = server_cpu() - server_before;
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  if (events == 0) die("EVENTS must be a positive number");
  std::string pattern = (std::filesystem::temp_directory_path() / "ett-bench-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) die("mkdtemp failed");
  const std::filesystem::path dir = pattern;
  const std::string image = (dir / "trace.img").string();
  const std::string ett = std::string(ETT_BIN_DIR) + "/ett";

  std::printf("ett_load_bench: %llu synthetic events (ett synth --seed 1), in %s; load average %s\n",
              static_cast<unsigned long long>(events), dir.c_str(), ett::bench::load_average().c_str());
  std::printf("%s\n", ett::bench::fresh_memory_line().c_str());
  auto start = Clock::now();
  auto written = write_synth_capture(image, {events, 1, ett::format::Layout::Double2x4});
  if (!written) die(written.error().message);
  std::printf("%-50s %7.2f s\n", "synth (write the trace disk)", seconds_since(start));

  // ett load into SQLite: the `ett` binary end to end (a new file: decode, bulk insert, event_codes,
  // event_blocks), in process for the database part (another new file; the decoding runs beside the insert),
  // and a second trace into the first file (its events table already holds the first trace).
  const std::string db_url = "sqlite:" + (dir / "ett.db").string();
  double ett_load_cpu = 0;
  const double ett_load =
      shell(fmt::format("'{}' load '{}' --db '{}' >/dev/null", ett, image, db_url), ett_load_cpu);
  const LoadTimes sqlite = timed_load("sqlite:" + (dir / "ett-inprocess.db").string(), image, false);
  // A second trace of the same size into that file.
  const std::string second = (dir / "second.img").string();
  if (auto made = write_synth_capture(second, {events, 2, ett::format::Layout::Double2x4}); !made)
    die(made.error().message);
  double second_cpu = 0;
  const double second_load =
      shell(fmt::format("'{}' load '{}' --db '{}' >/dev/null", ett, second, db_url), second_cpu);

  // The named queries that the indexes serve, through the `ett` binary on the loaded file.
  double query_cpu = 0;
  const double codes = shell(fmt::format("'{}' query codes --db '{}' >/dev/null", ett, db_url), query_cpu);
  const double window =
      shell(fmt::format("'{}' query window 1000000 2000000 --db '{}' >/dev/null", ett, db_url), query_cpu);

  // What a user of the original tool would do: extract CSV, then the sqlite3 shell's .import.
  const std::string csv = (dir / "events.csv").string();
  double extract_cpu = 0, import_cpu = 0;
  const double extract =
      shell(fmt::format("'{}' extract '{}' -o '{}' 2>/dev/null", ett, image, csv), extract_cpu);
  const double import = shell(
      fmt::format("sqlite3 '{}' '.import --csv {} events'", (dir / "import.db").string(), csv), import_cpu);

  // PostgreSQL: a throwaway server (fsync off, unix socket), binary COPY. The first load into a new cluster
  // writes its WAL into new segments, which the server fills with zeros first; the second trace into the same
  // server is what a server that has run a while does.
  LoadTimes pg, pg_second;
  {
    auto server = ThrowawayPostgres::start();
    if (!server) die(server.error().message);
    pg = timed_load(server->uri(), image, true, server->directory() + "/data");
    pg_second = timed_load(server->uri(), second, true, server->directory() + "/data");
  }

  row("ett load -> SQLite, the ett binary (end to end)", events, ett_load, ett_load_cpu);
  row("ett load -> SQLite, a second trace into that file", events, second_load, second_cpu);
  // SQLite takes a complete session's events as they are decoded: its database part has the decoding beside
  // it.
  row("ett load -> SQLite (database part, in process)", events, sqlite.database.wall, sqlite.database.cpu);
  row("ett load -> SQLite (decode + load, in process)", events, sqlite.total.wall, sqlite.total.cpu);
  row("ett load -> PostgreSQL COPY binary (database part)", events, pg.database.wall, pg.server_cpu);
  row("ett load -> PostgreSQL COPY binary (decode + load)", events, pg.total.wall,
      pg.total.cpu + pg.server_cpu);
  row("ett load -> PostgreSQL, a second trace", events, pg_second.total.wall,
      pg_second.total.cpu + pg_second.server_cpu);
  row("sqlite3 .import of the CSV", events, import, import_cpu);
  row("ett extract to CSV + sqlite3 .import", events, extract + import, extract_cpu + import_cpu);
  std::printf(
      "(cpu: the ett binary and the sqlite3 shell = the child process; SQLite in process = this process; "
      "PostgreSQL database part = the server (every backend), decode + load = "
      "server + this process; .import = the sqlite3 shell)\n");
  std::printf("%-50s %7.2f s\n", "ett query codes (SQLite, the ett binary)", codes);
  std::printf("%-50s %7.2f s\n", "ett query window 1000000 2000000 (SQLite)", window);
  std::printf(
      "SQLite: ett load (the ett binary, end to end) is %.2fx the sqlite3 .import alone in wall time, %.2fx "
      "in cpu time\n",
      import / ett_load, import_cpu / ett_load_cpu);
  std::printf("load average at the end: %s\n", ett::bench::load_average().c_str());
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}
