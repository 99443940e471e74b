// synth.cpp: generates request/response traffic as a capture kernel would have stamped it.
#include "image/synth.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <ctime>
#include <random>

#include "common/probe_layout.h"
#include "image/disk_maker.h"
#include "image/session_writer.h"

namespace ett::host {

namespace f = ett::format;

SynthCapture synth_capture(const SynthOptions& options) {
  std::mt19937_64 random(options.seed);
  SynthCapture capture;
  // A 2.0-3.9 GHz machine, calibrated to the kHz like the kernel's PIT calibration.
  capture.tsc_hz = 2'000'000'000 + (random() % 1'900'000) * 1000;
  capture.capture_start_tsc = 1'000'000'000 + random() % 1'000'000'000;
  const ProbeLayout layout(options.layout);
  const int probes = layout.probe_count();
  const uint8_t max_code = layout.max_code();
  uint8_t lines = 0;
  capture.initial_lines = lines;

  const double ticks_per_us = static_cast<double>(capture.tsc_hz) / 1e6;
  std::exponential_distribution<double> gap_us(1.0 / 40.0);  // mean 40 us between requests
  std::lognormal_distribution<double> service_us(std::log(15.0), 0.5);
  std::uniform_int_distribution<int> percent(0, 99);
  capture.records.reserve(options.events);
  uint64_t tsc = capture.capture_start_tsc;
  int pair = 0;
  auto change = [&](int probe, uint64_t at) {
    // A new code on the probe (a repeated code cannot be seen on the lines).
    const uint8_t old_code = layout.code_of(lines, probe);
    uint8_t code = static_cast<uint8_t>(1 + random() % max_code);
    if (code == old_code) code = static_cast<uint8_t>(code % max_code + 1);
    if (max_code == 1) code = old_code ? 0 : 1;
    lines = layout.with_code(lines, probe, code);
    f::EventRecord record{};
    record.tsc = at;
    record.probe = static_cast<uint8_t>(probe);
    record.code = code;
    record.lines = lines;
    capture.records.push_back(record);
  };
  constexpr uint64_t kProgressEvery = uint64_t{1} << 18;
  uint64_t next_progress = kProgressEvery;
  while (capture.records.size() < options.events) {
    if (options.progress && capture.records.size() >= next_progress) {
      options.progress("generating", capture.records.size());
      next_progress += kProgressEvery;
    }
    const int request_probe = probes == 1 ? 1 : (2 * pair) % probes + 1;
    const int response_probe = probes == 1 ? 1 : request_probe % probes + 1;
    pair = probes > 2 ? (pair + 1) % (probes / 2) : 0;
    tsc += 200 + static_cast<uint64_t>(gap_us(random) * ticks_per_us);
    change(request_probe, tsc);
    if (capture.records.size() == options.events) break;
    if (probes > 1 && percent(random) == 0) {
      change(response_probe, tsc);  // seen in the same poll
      continue;
    }
    tsc += 100 + static_cast<uint64_t>(service_us(random) * ticks_per_us);
    change(response_probe, tsc);
  }
  if (options.clock_ppm != 0) {
    // Ticks since the start, to the nearest, of a clock 1 + ppm / 10^6 times as fast.
    const long double rate = 1.0L + static_cast<long double>(options.clock_ppm) / 1e6L;
    for (f::EventRecord& record : capture.records)
      record.tsc = capture.capture_start_tsc +
                   static_cast<uint64_t>(
                       std::llround(static_cast<long double>(record.tsc - capture.capture_start_tsc) * rate));
  }
  return capture;
}

Expected<SynthWritten> write_synth_capture(const std::string& path, const SynthOptions& options) {
  SynthWritten written;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return make_error(ErrorKind::Io, errno_message(path, errno));
    MakeDiskOptions disk;
    disk.path = path;
    const uint64_t needed = (f::kFirstSessionLba + f::session_sectors(options.events)) * f::kSectorSize;
    const uint64_t mib = 1ull << 20;
    disk.size_bytes = std::max(kDefaultDiskBytes, (needed + mib - 1) / mib * mib);
    disk.size_given = true;
    disk.name = "ett synth";
    auto made = make_disk(disk);
    if (!made) return made.failure();
    written.created_disk = true;
  }
  auto writer = SessionWriter::open(path);
  if (!writer) return writer.failure();
  const SynthCapture capture = synth_capture(options);
  SessionSpec spec;
  spec.records = capture.records;
  spec.tsc_hz = capture.tsc_hz;
  spec.capture_start_tsc = capture.capture_start_tsc;
  spec.initial_lines = capture.initial_lines;
  spec.layout = options.layout;
  spec.captured_at_unix = static_cast<uint64_t>(std::time(nullptr));
  spec.cmdline =
      std::string("layout=") + f::layout_name(static_cast<uint32_t>(options.layout)) + " (ett synth)";
  spec.cpu_vendor = "GenuineIntel";
  spec.cpu_brand = "ett synth";
  if (options.progress) options.progress("writing", 0);
  auto appended = writer->append(spec);
  if (!appended) return appended.failure();
  written.session = writer->last_session();
  written.events = capture.records.size();
  return written;
}

}  // namespace ett::host
