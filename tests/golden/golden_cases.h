// golden_cases.h: the golden tests (tests/golden/cases.txt): the trace disk they analyse, the real `ett`
// binary that runs each case's command line, and the expected files; shared by the SQLite run
// (ett_unit_tests) and the PostgreSQL run (ett_db_tests), so both engines are held to the same files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ett/trace_format.h"
#include "image/session_writer.h"
#include "qemu/qemu_test_support.h"  // shell_quote, slurp

namespace ett::test {

namespace golden {

namespace fs = std::filesystem;
namespace f = ett::format;

inline const fs::path kDir = ETT_GOLDEN_DIR;  // tests/golden

// One line of cases.txt: the expected file and the `ett` arguments ({out}: a scratch file compared instead of
// standard output).
struct Case {
  std::string golden;
  std::vector<std::string> args;
  int line = 0;
};

inline std::vector<Case> read_cases() {
  std::ifstream in(kDir / "cases.txt");
  if (!in) throw std::runtime_error("cannot read " + (kDir / "cases.txt").string());
  std::vector<Case> cases;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream words(text);
    Case c;
    c.line = line;
    words >> c.golden;
    for (std::string word; words >> word;) c.args.push_back(word);
    cases.push_back(std::move(c));
  }
  return cases;
}

using Run = EttRun;

// Runs the real `ett` binary of this build.
inline Run ett(const std::vector<std::string>& args) {
  char err_name[] = "/tmp/ett-golden-err-XXXXXX";
  const int err_fd = ::mkstemp(err_name);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  ::close(err_fd);
  std::string command = shell_quote(std::string(ETT_BIN_DIR) + "/ett");
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  Run run = run_command(command + " 2>" + shell_quote(err_name) + " </dev/null", err_name);
  ::unlink(err_name);
  return run;
}

// A mode=calibrate capture at 3 GHz (as the kernel records it: probe 0, aux = the step in ticks): 3000 steps
// of mostly 540 ticks (180 ns), a tail of 600-1500 ticks and two stalls of 6000; "ett synth"'s CPU, so that
// the synthetic traffic quotes its tau.
inline std::vector<f::EventRecord> calibrate_records() {
  std::vector<f::EventRecord> records;
  uint64_t tsc = 2'000'000, state = 12345;
  for (int i = 0; i <= 3000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG: fixed, portable
    const uint32_t r = static_cast<uint32_t>(state >> 33) % 1000;
    const uint32_t step = i == 0                     ? 0
                          : (i == 1200 || i == 2400) ? 6000
                          : r < 900                  ? 540 + r % 7
                                                     : 600 + r * 9 / 10;
    tsc += step;
    records.push_back({tsc, 0, 0, 0, 0, step});
  }
  return records;
}

// Two captures of one sync line (probe 1, an edge every 1 ms) and some traffic on probe 2: the second clock
// runs 50 ppm fast and started 2.5 ms later, with a few ns of deterministic jitter on each edge.
inline std::vector<f::EventRecord> sync_records(bool second) {
  std::vector<f::EventRecord> records;
  uint8_t sync = 0, traffic = 0;  // probe 1 = D3..D0, probe 2 = D7..D4
  for (int k = 0; k < 20; ++k) {
    const double ref_ns = 1'000'000.0 * (k + 3);
    const double local_ns = second ? (ref_ns - 2'500'000.0) * (1 + 50e-6) + (k % 3) * 7 : ref_ns;
    const uint64_t tsc = 10'000'000 + static_cast<uint64_t>(local_ns);  // 1 GHz: a tick is a ns
    sync = sync ? 0 : 15;
    records.push_back({tsc, 1, sync, static_cast<uint8_t>(traffic << 4 | sync), 0, 0});
    traffic = static_cast<uint8_t>(1 + k % 14);
    records.push_back({tsc + 300'000 + static_cast<uint64_t>(k) * 1000, 2, traffic,
                       static_cast<uint8_t>(traffic << 4 | sync), 0, 0});
  }
  return records;
}

// The disk every case runs on, loaded with `ett load --all`:
//   trace 1: ett synth --events 200 --seed 7 (request/response traffic, layout 2x4)
//   trace 2: calibrate_records()
//   traces 3 and 4: sync_records(false) and sync_records(true), at 1 GHz
//   trace 5: a capture without events
inline void write_disk(const std::string& image) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"mkdisk", image, "--size", "8M", "--name", "golden"},
        std::vector<std::string>{"synth", image, "--events", "200", "--seed", "7"}}) {
    const Run run = ett(args);
    if (run.status != 0) throw std::runtime_error("ett " + args[0] + ": " + run.err);
  }
  auto writer = host::SessionWriter::open(image);
  if (!writer) throw std::runtime_error(writer.error().message);
  auto append = [&](host::SessionSpec spec) {
    spec.captured_at_unix = 1'700'000'000;
    spec.cpu_vendor = "GenuineIntel";
    if (spec.cpu_brand.empty()) spec.cpu_brand = "ett synth";
    auto lba = writer->append(spec);
    if (!lba) throw std::runtime_error(lba.error().message);
  };
  const auto calibrate = calibrate_records();
  host::SessionSpec spec;
  spec.records = calibrate;
  spec.mode = f::CaptureMode::Calibrate;
  spec.capture_start_tsc = 1'000'000;
  append(spec);
  for (bool second : {false, true}) {
    const auto sync = sync_records(second);
    host::SessionSpec capture;
    capture.records = sync;
    capture.tsc_hz = 1'000'000'000;
    capture.capture_start_tsc = 10'000'000;
    capture.cpu_brand = second ? "the second PC" : "the first PC";
    append(capture);
  }
  append(host::SessionSpec{});
}

// What a case produced: its file when it writes one ({out}), else its standard output. The lines that name
// the build and the capture's date (VCD $version, $date; the report's "Generated by") are dropped: they are
// not the analysis.
inline std::string output_of(const Case& c, const std::string& db_url, const fs::path& scratch, Run& run) {
  const fs::path out = scratch / ("out-" + std::to_string(c.line));
  fs::remove(out);  // the same case runs once per engine
  std::vector<std::string> args;
  bool to_file = false;
  for (const std::string& arg : c.args) {
    to_file |= arg == "{out}";
    args.push_back(arg == "{out}" ? out.string() : arg);
  }
  args.push_back("--db");
  args.push_back(db_url);
  run = ett(args);
  std::string text = to_file ? slurp(out) : run.out;
  for (const char* volatile_line : {"$version ett ", "$date ", "<p class=\"note\">Generated by ett "}) {
    const size_t at = text.find(volatile_line);
    if (at != std::string::npos) text.erase(at, text.find('\n', at) - at + 1);
  }
  return text;
}

}  // namespace golden

}  // namespace ett::test
