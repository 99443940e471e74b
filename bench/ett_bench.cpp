// ett_bench.cpp: `make bench`: Google Benchmark of decode, load, every analysis and every export over a
// synthetic capture (default 10 million events, $ETT_BENCH_EVENTS overrides), printed as one table and saved
// as JSON.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analysis/align.h"
#include "analysis/capture.h"
#include "analysis/durations.h"
#include "analysis/fit.h"
#include "analysis/histogram.h"
#include "analysis/intervals.h"
#include "analysis/precision.h"
#include "db/database.h"
#include "db/loader.h"
#include "export/csv.h"
#include "export/perfetto.h"
#include "export/vcd.h"
#include "image/synth.h"
#include "image/trace_image.h"
#include "support/pg_server.h"

namespace {

using namespace ett::host;
namespace fs = std::filesystem;
namespace f = ett::format;

uint64_t bench_events() {
  const char* text = std::getenv("ETT_BENCH_EVENTS");
  return text ? std::strtoull(text, nullptr, 10) : 10'000'000;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "ett_bench: %s\n", message.c_str());
  std::exit(1);
}

// Everything the benchmarks share is made once, on first use: the trace disk, the in-memory captures.
class Fixture {
 public:
  static Fixture& get() {
    static Fixture fixture;
    return fixture;
  }
  ~Fixture() {
    std::error_code ignored;
    fs::remove_all(m_dir, ignored);
  }

  uint64_t events() const { return m_events; }
  const fs::path& dir() const { return m_dir; }

  const std::string& image() {
    if (m_image.empty()) {
      m_image = (m_dir / "trace.img").string();
      auto written = write_synth_capture(m_image, {m_events, 1, f::Layout::Double2x4});
      if (!written) die(written.error().message);
    }
    return m_image;
  }

  // The synthetic request/response capture as the analyses see it (what load_capture reads from the
  // database).
  const Capture& capture() {
    if (!m_capture) {
      const SynthCapture synth = synth_capture({m_events, 1, f::Layout::Double2x4});
      m_capture = to_capture(synth, "capture");
    }
    return *m_capture;
  }

  // A mode=calibrate capture: every loop step a record, steps of 150 ticks plus a long tail.
  const Capture& calibrate_capture() {
    if (!m_calibrate) {
      SynthCapture synth;
      synth.tsc_hz = 2'250'000'000;
      synth.capture_start_tsc = 1'000'000;
      std::mt19937_64 random(2);
      std::geometric_distribution<uint64_t> extra(0.05);
      uint64_t tsc = synth.capture_start_tsc;
      synth.records.resize(m_events);
      for (auto& record : synth.records) {
        tsc += 150 + extra(random);
        record.tsc = tsc;
        record.probe = 1;
      }
      m_calibrate = to_capture(synth, "calibrate");
    }
    return *m_calibrate;
  }

  // Two captures of half the events each, the second on a clock 250 ppm fast and 3 ms late: align's input.
  const std::vector<Capture>& align_captures_input() {
    if (m_align.empty()) {
      const SynthCapture synth = synth_capture({m_events / 2, 3, f::Layout::Double2x4});
      m_align.push_back(to_capture(synth, "capture"));
      Capture shifted = m_align.front();
      for (AnalysisEvent& event : shifted.events) {
        event.time_ns = event.time_ns * (1 + 250e-6) + 3e6;
        event.tsc = synth.capture_start_tsc + static_cast<uint64_t>(event.time_ns * synth.tsc_hz / 1e9);
      }
      m_align.push_back(std::move(shifted));
    }
    return m_align;
  }

 private:
  Fixture() : m_events(bench_events()) {
    std::string pattern = (fs::temp_directory_path() / "ett-bench-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) die("mkdtemp failed");
    m_dir = pattern;
  }

  static Capture to_capture(const SynthCapture& synth, const char* mode) {
    Capture capture;
    capture.info.name = "ett_bench";
    capture.info.tsc_hz = synth.tsc_hz;
    capture.info.capture_start_tsc = synth.capture_start_tsc;
    capture.info.capture_end_tsc =
        synth.records.empty() ? synth.capture_start_tsc : synth.records.back().tsc + 1;
    capture.info.mode = mode;
    capture.info.initial_lines = synth.initial_lines;
    capture.events.reserve(synth.records.size());
    for (size_t i = 0; i < synth.records.size(); ++i) {
      const f::EventRecord& record = synth.records[i];
      AnalysisEvent event;
      event.seq = i;
      event.probe = record.probe;
      event.code = record.code;
      event.lines = record.lines;
      event.tsc = record.tsc;
      event.time_ns =
          static_cast<double>(record.tsc - synth.capture_start_tsc) * 1e9 / static_cast<double>(synth.tsc_hz);
      capture.events.push_back(event);
    }
    return capture;
  }

  uint64_t m_events = 0;
  fs::path m_dir;
  std::string m_image;
  std::optional<Capture> m_capture;
  std::optional<Capture> m_calibrate;
  std::vector<Capture> m_align;
};

// Events and (when given) bytes per second over the iterations run.
void set_rates(benchmark::State& state, uint64_t events, uint64_t bytes) {
  state.counters["events"] = benchmark::Counter(static_cast<double>(events));
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  if (bytes) state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}

// Decode: open the image, walk the sessions, read every chunk (CRC32C) into events. Bytes are the 16-byte
// records.
void BM_Decode(benchmark::State& state) {
  const std::string& path = Fixture::get().image();
  uint64_t events = 0;
  for (auto _ : state) {
    auto image = TraceImage::open(path);
    if (!image) die(image.error().message);
    auto data = image->read_session(image->sessions().size() - 1);
    if (!data) die(data.error().message);
    events = data->events.size();
    benchmark::DoNotOptimize(data->events.data());
  }
  set_rates(state, events, events * sizeof(f::EventRecord));
}

// Load: decode and load the session into a fresh database (the `ett load` path); run once, since a second
// load of the same trace finds it already loaded.
void run_load(benchmark::State& state, const std::string& url) {
  const std::string& image = Fixture::get().image();
  uint64_t events = 0;
  for (auto _ : state) {
    auto db = open_database(url);
    if (!db) die(db.error().message);
    auto loaded = load_image(**db, LoadRequest{image, std::nullopt, false});
    if (!loaded) die(loaded.error().message);
    events = loaded->front().events;
  }
  set_rates(state, events, events * sizeof(f::EventRecord));
}

void BM_LoadSqlite(benchmark::State& state) {
  const fs::path db = Fixture::get().dir() / "bench.db";
  std::error_code ignored;
  fs::remove(db, ignored);
  run_load(state, "sqlite:" + db.string());
  fs::remove(db, ignored);
}

// A throwaway server (fsync off, unix socket), as the database tests use; skipped when PostgreSQL is missing.
void BM_LoadPostgres(benchmark::State& state) {
  const char* bin = std::getenv("ETT_PG_BIN");
  const std::string pg_bin = bin ? bin : "/usr/lib/postgresql/15/bin";
  if (::access((pg_bin + "/initdb").c_str(), X_OK) != 0 ||
      ::access((pg_bin + "/pg_ctl").c_str(), X_OK) != 0) {
    const std::string why =
        "PostgreSQL skipped: no initdb/pg_ctl in " + pg_bin + " (install postgresql-15 or set ETT_PG_BIN)";
    std::fprintf(stderr, "ett_bench: %s\n", why.c_str());
    state.SkipWithError(why.c_str());
    for (auto _ : state) {
    }
    return;
  }
  Fixture::get().image();  // made before the server starts, so that the server's start is not timed either
  auto server = ThrowawayPostgres::start();
  if (!server) die(server.error().message);
  run_load(state, server->uri());
}

void BM_Precision(benchmark::State& state) {
  const Capture& capture = Fixture::get().calibrate_capture();
  for (auto _ : state) {
    auto result = analyze_precision(capture);
    if (!result) die(result.error().message);
    benchmark::DoNotOptimize(result->levels.data());
  }
  set_rates(state, capture.events.size(), 0);
}

void BM_Durations(benchmark::State& state) {
  const Capture& capture = Fixture::get().capture();
  for (auto _ : state) {
    auto result = pair_actions(capture.events, Endpoint{1, std::nullopt}, Endpoint{2, std::nullopt}, 10.0);
    if (!result) die(result.error().message);
    benchmark::DoNotOptimize(result->actions.data());
  }
  set_rates(state, capture.events.size(), 0);
}

void BM_DurationsFit(benchmark::State& state) {
  const Capture& capture = Fixture::get().capture();
  std::map<uint8_t, double> sizes;
  for (int code = 1; code <= 15; ++code) sizes[static_cast<uint8_t>(code)] = 16.0 * code;
  for (auto _ : state) {
    auto actions = pair_actions(capture.events, Endpoint{1, std::nullopt}, Endpoint{2, std::nullopt}, 10.0);
    if (!actions) die(actions.error().message);
    auto fit = fit_durations(actions->actions, sizes);
    if (!fit) die(fit.error().message);
    benchmark::DoNotOptimize(fit->fit.slope_ns);
  }
  set_rates(state, capture.events.size(), 0);
}

void BM_Intervals(benchmark::State& state) {
  const Capture& capture = Fixture::get().capture();
  for (auto _ : state) {
    auto result = analyze_intervals(capture.events, 1000.0);
    benchmark::DoNotOptimize(result.probes.data());
  }
  set_rates(state, capture.events.size(), 0);
}

void run_histogram(benchmark::State& state, const std::string& by, const std::optional<std::string>& match) {
  const Capture& capture = Fixture::get().capture();
  auto spec = parse_histogram_by(by);
  if (!spec) die(spec.error().message);
  std::optional<TritPattern> filter;
  if (match) {
    auto pattern = parse_trits(*match);
    if (!pattern) die(pattern.error().message);
    filter = *pattern;
  }
  for (auto _ : state) {
    auto result = histogram(capture.events, *spec, filter);
    benchmark::DoNotOptimize(result.rows.data());
  }
  set_rates(state, capture.events.size(), 0);
}

void BM_HistogramCode(benchmark::State& state) {
  run_histogram(state, "code", std::nullopt);
}
void BM_HistogramProbeMatch(benchmark::State& state) {
  run_histogram(state, "probe", "XXXX1XXX");
}
void BM_HistogramTime(benchmark::State& state) {
  run_histogram(state, "time:1ms", std::nullopt);
}

void BM_Align(benchmark::State& state) {
  const std::vector<Capture>& captures = Fixture::get().align_captures_input();
  uint64_t events = 0;
  for (const Capture& capture : captures) events += capture.events.size();
  for (auto _ : state) {
    auto result = align_captures(captures, 1);
    if (!result) die(result.error().message);
    // The fits, the merge's marks and one walk of the merged timeline (what writing it walks).
    uint64_t walked = 0;
    result->timeline.walk(0, result->timeline.size(),
                          [&walked](const MergedRef& ref) { walked += ref.event; });
    benchmark::DoNotOptimize(walked);
  }
  set_rates(state, events, 0);
}

// Exports: bytes are those of the text written.
template <typename Export>
void run_export(benchmark::State& state, Export&& make) {
  const Capture& capture = Fixture::get().capture();
  uint64_t bytes = 0;
  for (auto _ : state) {
    const std::string text = make(capture);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  set_rates(state, capture.events.size(), bytes);
}

void BM_ExportVcd(benchmark::State& state) {
  run_export(state, [](const Capture& capture) { return export_vcd(capture); });
}
void BM_ExportCsv(benchmark::State& state) {
  run_export(state, [](const Capture& capture) { return export_csv(capture); });
}
void BM_ExportPerfetto(benchmark::State& state) {
  const Capture& capture = Fixture::get().capture();
  auto actions = pair_actions(capture.events, Endpoint{1, std::nullopt}, Endpoint{2, std::nullopt}, 0);
  if (!actions) die(actions.error().message);
  run_export(state, [&](const Capture& c) { return export_perfetto(c, actions->actions); });
}

}  // namespace

namespace {

// One row per benchmark: name, events, CPU and wall seconds per run, events/s and MB/s (1 MB = 1e6 bytes;
// only where bytes are meaningful: records decoded or loaded, text exported). The rates are per CPU second
// for the in-process benchmarks (what the code costs, whatever else the machine runs) and per wall second for
// the loads (the database server is another process).
class TableReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override {
    std::printf("ett_bench: %llu events, %d CPUs at %.0f MHz\n",
                static_cast<unsigned long long>(bench_events()), context.cpu_info.num_cpus,
                context.cpu_info.cycles_per_second / 1e6);
    std::printf("%-24s %11s %9s %9s %13s %8s\n", "benchmark", "events", "cpu (s)", "wall (s)", "events/s",
                "MB/s");
    std::fflush(stdout);
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) {
        std::printf("%-24s skipped: %s\n", run.benchmark_name().c_str(), run.error_message.c_str());
        continue;
      }
      const double runs = run.iterations ? static_cast<double>(run.iterations) : 1;
      auto counter = [&](const char* name) {
        auto found = run.counters.find(name);
        return found == run.counters.end() ? 0.0 : found->second.value;
      };
      const double bytes = counter("bytes_per_second");
      std::printf("%-24s %11.0f %9.3f %9.3f %13.0f %8s\n", run.run_name.function_name.c_str(),
                  counter("events"), run.cpu_accumulated_time / runs, run.real_accumulated_time / runs,
                  counter("events_per_second"), bytes > 0 ? fmt::format("{:.0f}", bytes / 1e6).c_str() : "-");
    }
    std::fflush(stdout);
  }
};

}  // namespace

// The loads run once (on the wall clock); the rest repeat until they have used half a second of CPU.
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_LoadSqlite)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_LoadPostgres)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Precision)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_Durations)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_DurationsFit)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_Intervals)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_HistogramCode)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_HistogramProbeMatch)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_HistogramTime)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_Align)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_ExportVcd)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_ExportPerfetto)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_ExportCsv)->Unit(benchmark::kMillisecond)->MinTime(0.5);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter table;
  benchmark::RunSpecifiedBenchmarks(&table);
  benchmark::Shutdown();
  return 0;
}
