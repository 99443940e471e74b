// load_bench.cpp: `ett_load_bench [EVENTS]`: events/s of `ett load` into SQLite and PostgreSQL for a synthetic
// capture (default 10 million events), next to the sqlite3 shell's .import of the same events as CSV.
#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "db_loader.h"
#include "db_pg_server.h"
#include "synth_capture.h"

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

double shell(const std::string& command) {
  const auto start = Clock::now();
  const int status = std::system(command.c_str());
  if (status != 0) die("failed: " + command);
  return seconds_since(start);
}

void row(const char* what, uint64_t events, double seconds) {
  std::printf("%-52s %8.2f s  %6.2f M events/s\n", what, seconds, events / seconds / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t events = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  std::string pattern = (std::filesystem::temp_directory_path() / "ett-bench-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) die("mkdtemp failed");
  const std::filesystem::path dir = pattern;
  const std::string image = (dir / "trace.img").string();
  const std::string ett = std::string(ETT_BIN_DIR) + "/ett";

  std::printf("ett_load_bench: %llu synthetic events (ett synth --seed 1), in %s\n",
              static_cast<unsigned long long>(events), dir.c_str());
  auto start = Clock::now();
  auto written = write_synth_capture(image, {events, 1, ett::format::Layout::Double2x4});
  if (!written) die(written.error().message);
  std::printf("%-52s %8.2f s\n", "synth (write the trace disk)", seconds_since(start));

  // ett load into SQLite, end to end (decode + load) and the database part alone.
  const std::string sqlite_db = (dir / "ett.db").string();
  start = Clock::now();
  double sqlite_load = 0;
  {
    auto db = open_database("sqlite:" + sqlite_db);
    if (!db) die(db.error().message);
    auto loaded = load_image(**db, {image, std::nullopt, false});
    if (!loaded) die(loaded.error().message);
    sqlite_load = (*loaded)[0].seconds;
  }
  const double sqlite_total = seconds_since(start);

  // What a user of the original tool would do: extract CSV, then the sqlite3 shell's .import.
  const std::string csv = (dir / "events.csv").string();
  const double extract = shell(fmt::format("'{}' extract '{}' -o '{}' 2>/dev/null", ett, image, csv));
  const double import =
      shell(fmt::format("sqlite3 '{}' '.import --csv {} events'", (dir / "import.db").string(), csv));

  // PostgreSQL: a throwaway server (fsync off, unix socket), binary COPY.
  double pg_load = 0, pg_total = 0;
  {
    auto server = ThrowawayPostgres::start();
    if (!server) die(server.error().message);
    start = Clock::now();
    auto db = open_database(server->uri());
    if (!db) die(db.error().message);
    auto loaded = load_image(**db, {image, std::nullopt, false});
    if (!loaded) die(loaded.error().message);
    pg_load = (*loaded)[0].seconds;
    pg_total = seconds_since(start);
  }

  row("ett load -> SQLite (database part)", events, sqlite_load);
  row("ett load -> SQLite (decode + load)", events, sqlite_total);
  row("ett load -> PostgreSQL, binary COPY (database part)", events, pg_load);
  row("ett load -> PostgreSQL, binary COPY (decode + load)", events, pg_total);
  row("sqlite3 .import of the CSV", events, import);
  row("ett extract to CSV + sqlite3 .import", events, extract + import);
  std::printf("SQLite: ett load (decode + load) is %.1fx the sqlite3 .import alone\n", import / sqlite_total);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}
