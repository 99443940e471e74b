// ettprobe.cpp: the C API of libettprobe over the cable backends; no C++ exception crosses it.
#include "ettprobe.h"

#include <time.h>
#include <x86intrin.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "cable.h"
#include "probe_url.h"
#include "signal_log.h"

struct ett_probe {
  std::unique_ptr<ett::probe::Cable> cable;
  ett::host::ProbeLayout layout;
  std::optional<ett::probe::SignalLog> log;
};

namespace {

thread_local std::string t_last_error;

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec);
}

template <typename T>
T fail(std::string message, T value) {
  t_last_error = std::move(message);
  return value;
}

ett_probe* open_probe(const char* url) {
  if (!url) return fail<ett_probe*>("ett_probe_open: the URL is NULL", nullptr);
  auto parsed = ett::probe::parse_probe_url(url);
  if (!parsed) return fail<ett_probe*>(parsed.error().message, nullptr);
  auto cable = parsed->backend == ett::probe::Backend::Ppdev ? ett::probe::open_ppdev_cable(*parsed)
                                                             : ett::probe::open_shm_cable(*parsed);
  if (!cable) return fail<ett_probe*>(cable.error().message, nullptr);
  auto probe = std::make_unique<ett_probe>();
  probe->cable = std::move(*cable);
  probe->layout = parsed->layout;
  std::optional<std::string> log_path = parsed->log;
  if (!log_path)
    if (const char* env = std::getenv("ETT_PROBE_LOG"); env && *env) log_path = env;
  if (log_path) {
    auto log = ett::probe::SignalLog::open(*log_path);
    if (!log) return fail<ett_probe*>(log.error().message, nullptr);
    probe->log.emplace(std::move(*log));
  }
  t_last_error.clear();
  return probe.release();
}

int signal_probe(ett_probe* probe, int probe_number, int code) {
  if (!probe) return fail("ett_probe_signal: the probe is NULL", -1);
  const ett::host::ProbeLayout& layout = probe->layout;
  if (probe_number < 1 || probe_number > layout.probe_count())
    return fail("probe " + std::to_string(probe_number) + " out of range: layout " + layout.name() +
                    " has probes 1-" + std::to_string(layout.probe_count()),
                -1);
  if (code < 0 || code > layout.max_code())
    return fail("code " + std::to_string(code) + " out of range: a probe of layout " + layout.name() +
                    " shows codes 0-" + std::to_string(layout.max_code()),
                -1);
  auto lines = probe->cable->put(layout, probe_number, static_cast<uint8_t>(code));
  const uint64_t tsc = __rdtsc();  // right after the store, as the injector's sent log
  if (!lines) return fail(lines.error().message, -1);
  if (probe->log) {
    auto logged = probe->log->append(probe_number, static_cast<uint8_t>(code), *lines, monotonic_ns(), tsc);
    if (!logged) return fail("the signal went out, but " + logged.error().message, -1);
  }
  t_last_error.clear();
  return 0;
}

}  // namespace

extern "C" {

ett_probe* ett_probe_open(const char* url) {
  try {
    return open_probe(url);
  } catch (const std::exception& error) {
    return fail<ett_probe*>(std::string("ett_probe_open: ") + error.what(), nullptr);
  }
}

int ett_probe_signal(ett_probe* probe, int probe_number, int code) {
  try {
    return signal_probe(probe, probe_number, code);
  } catch (const std::exception& error) {
    return fail(std::string("ett_probe_signal: ") + error.what(), -1);
  }
}

int ett_probe_count(const ett_probe* probe) {
  return probe ? probe->layout.probe_count() : 0;
}

int ett_probe_max_code(const ett_probe* probe) {
  return probe ? probe->layout.max_code() : 0;
}

unsigned ett_probe_lines(const ett_probe* probe) {
  return probe ? probe->cable->lines() : 0;
}

int ett_probe_close(ett_probe* probe) {
  if (!probe) return 0;
  auto flushed = probe->log ? probe->log->flush() : ett::host::Status{};
  auto closed = probe->cable->close();
  delete probe;
  if (!flushed) return fail(flushed.error().message, -1);
  if (!closed) return fail(closed.error().message, -1);
  return 0;
}

const char* ett_probe_last_error(void) {
  return t_last_error.c_str();
}

}  // extern "C"
