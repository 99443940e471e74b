// survey.cpp: mode=survey's checks (survey.h), each through the code a capture uses: the TSC calibration's
// results, the engine's probe sources, its calibrate and hwlat loops.
#include "survey/survey.h"

#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/pci.h"
#include "arch/x86/tsc_clock.h"
#include "drivers/console/console.h"
#include "drivers/console/serial_port.h"
#include "drivers/probe/ivshmem_probe.h"
#include "drivers/probe/port_lines.h"
#include "drivers/probe/uart_lines.h"
#include "engine/probe_engine.h"
#include "lib/format.h"
#include "lib/tsc_math.h"
#include "survey/survey_math.h"

namespace ett::survey {

namespace {

using format::ProbeSource;
using format::SurveyStatus;

struct Candidate {
  ProbeSource source;
  uint16_t base;  // 0: the source has no fixed address (pci-lpt, pci-uart, ivshmem)
};

// The legacy parallel ports, a PCI parallel card, the four UART addresses, a PCI serial card and the virtual
// probe.
constexpr Candidate kCandidates[] = {
    {ProbeSource::Lpt, 0x378},  {ProbeSource::Lpt, 0x278},  {ProbeSource::Lpt, 0x3BC},
    {ProbeSource::PciLpt, 0},   {ProbeSource::Uart, 0x3F8}, {ProbeSource::Uart, 0x2F8},
    {ProbeSource::Uart, 0x3E8}, {ProbeSource::Uart, 0x2E8}, {ProbeSource::PciUart, 0},
    {ProbeSource::Ivshmem, 0},
};
static_assert(sizeof(kCandidates) / sizeof(kCandidates[0]) <= format::kSurveyMaxProbes);

bool contains(const char* text, const char* part) {
  for (; *text != '\0'; ++text) {
    size_t i = 0;
    while (part[i] != '\0' && text[i] == part[i]) ++i;
    if (part[i] == '\0') return true;
  }
  return false;
}

// The open failures that mean "nothing there" rather than "there, but it failed its check".
bool means_absent(const char* message) {
  return contains(message, "no parallel port answers") || contains(message, "no UART answers") ||
         contains(message, "no PCI parallel-port card") || contains(message, "no PCI serial card") ||
         contains(message, "no ivshmem virtual probe");
}

uint32_t samples_buffer[kTimedReads];

// kTimedReads single reads, each between two clock reads, net of the cheapest empty pair of clock reads.
template <typename Clock, typename Source>
ReadStats time_reads(Source source) {
  const Clock clock;
  uint64_t empty = UINT64_MAX;
  for (int i = 0; i < 256; ++i) {
    const uint64_t a = clock.now();
    const uint64_t b = clock.now();
    if (b - a < empty) empty = b - a;
  }
  for (uint32_t i = 0; i < kTimedReads; ++i) {
    const uint64_t a = clock.now();
    (void)source.read();
    const uint64_t b = clock.now();
    samples_buffer[i] = saturate32(b - a > empty ? b - a - empty : 0);
  }
  return read_stats(samples_buffer, kTimedReads);
}

template <typename Clock>
ReadStats time_probe_reads(const engine::Probe& probe) {
  if (probe.uart_open && probe.uart_memory) return time_reads<Clock>(engine::uart_memory_lines(probe));
  if (probe.uart_open) return time_reads<Clock>(drivers::UartLines{probe.io_base});
  if (probe.source == ProbeSource::Ivshmem)
    return time_reads<Clock>(drivers::IvshmemLines{probe.ivshmem_lines});
  return time_reads<Clock>(drivers::PortLines{probe.io_base});
}

// A UART gets its registers back at once. A parallel port stays input (direction bit set) on a PC the
// kernel does not leave: restored, an SPP-mode port would drive its latch against whatever is wired to it
// (the engine's rule, engine/probe_engine.h); under exit=qemu it is restored as a capture's port is.
void release(const Machine& machine, const engine::Probe& probe) {
  if (probe.uart_open || machine.config.exit == config::ExitAction::Qemu) engine::close_probe(probe);
}

void check_probe(const Machine& machine, const Candidate& candidate, format::SurveyProbe& out) {
  out = {};
  out.source = static_cast<uint32_t>(candidate.source);
  out.address = candidate.base;
  out.port_mode = 0xFFFFFFFFu;
  if (candidate.source == ProbeSource::Uart && candidate.base == drivers::SerialPort::kCom1) {
    out.status = static_cast<uint32_t>(SurveyStatus::Refused);
    copy_detail(out.detail, sizeof(out.detail), "COM1, the kernel's serial console");
    return;
  }
  config::Config config = machine.config;
  config.mode = format::CaptureMode::Calibrate;
  config.probe = candidate.source;
  config.probe_io_base = candidate.base;
  config.limit_ms = kCalibrateLimitMs;
  config.keyboard = false;
  config.layout = format::Layout::Byte1x8;
  auto opened = engine::open_probe(config);
  if (!opened) {
    const char* message = opened.error().message;
    console::print("ETT: survey: %s\n", message);  // whole: the block's detail holds its first 55 characters
    out.status = static_cast<uint32_t>(means_absent(message) ? SurveyStatus::Absent : SurveyStatus::Failed);
    copy_detail(out.detail, sizeof(out.detail), message);
    return;
  }
  const engine::Probe& probe = *opened;
  out.address = probe.address;
  if (probe.lpt_open && probe.lpt.has_ecr) out.port_mode = probe.lpt.ecr >> 5;
  if (candidate.source == ProbeSource::PciLpt || candidate.source == ProbeSource::PciUart ||
      candidate.source == ProbeSource::Ivshmem) {
    out.pci_vendor = x86::pci::read16(probe.pci, x86::pci::kVendorId);
    out.pci_device = x86::pci::read16(probe.pci, x86::pci::kDeviceId);
  }
  x86::cli();
  const ReadStats reads = machine.cpu.has_sse2 ? time_probe_reads<x86::OrderedTscClock>(probe)
                                               : time_probe_reads<x86::TscClock>(probe);
  out.read_ticks_min = reads.min;
  out.read_ticks_median = reads.median;
  out.read_ticks_max = reads.max;
  out.reads = kTimedReads;

  const size_t steps =
      machine.buffer.capacity() < kCalibrateSteps ? machine.buffer.capacity() : kCalibrateSteps;
  const capture::EventBuffer scratch(const_cast<format::EventRecord*>(machine.buffer.begin()), steps);
  if (auto armed = engine::arm_probe(config, probe); !armed) {
    out.status = static_cast<uint32_t>(SurveyStatus::Failed);
    copy_detail(out.detail, sizeof(out.detail), armed.error().message);
    release(machine, probe);
    return;
  }
  const engine::EngineResult run =
      engine::run_engine(config, probe, machine.cpu, machine.tsc.hz, nullptr, scratch, 0);
  release(machine, probe);
  uint32_t longest = 0;
  for (uint64_t i = 0; i < run.capture.event_count; ++i)
    if (scratch.begin()[i].aux > longest) longest = scratch.begin()[i].aux;
  out.step_ticks_max = longest;
  out.status = static_cast<uint32_t>(SurveyStatus::Usable);
  char detail[sizeof(out.detail)];
  lib::format(detail, sizeof(detail), "%llu steps, floor %u.%03u ticks/poll", run.capture.event_count,
              run.floor_milliticks / 1000, run.floor_milliticks % 1000);
  copy_detail(out.detail, sizeof(out.detail), detail);
}

void fill_timers(const x86::TscCalibration& tsc, format::SurveyBlock& block) {
  struct Row {
    format::TscMethod method;
    const lib::ReferenceResult* result;
    bool absent;  // the machine has no such timer (its problem is not a failed measurement)
  };
  const Row rows[] = {
      {format::TscMethod::Hpet, &tsc.results[static_cast<uint32_t>(lib::Reference::Hpet)],
       tsc.timers.hpet_missing != nullptr},
      {format::TscMethod::PmTimer, &tsc.results[static_cast<uint32_t>(lib::Reference::PmTimer)],
       tsc.timers.pm_timer_missing != nullptr},
      {format::TscMethod::Pit, &tsc.results[static_cast<uint32_t>(lib::Reference::Pit)], false},
      {format::TscMethod::Cpuid, &tsc.nominal, true},
  };
  static_assert(sizeof(rows) / sizeof(rows[0]) == format::kSurveyMaxTimers);
  block.timer_count = 0;
  for (const Row& row : rows) {
    format::SurveyTimer& timer = block.timers[block.timer_count++];
    timer = {};
    timer.method = static_cast<uint32_t>(row.method);
    if (row.result->problem) {
      timer.status = static_cast<uint32_t>(row.absent ? SurveyStatus::Absent : SurveyStatus::Failed);
      continue;
    }
    timer.status = static_cast<uint32_t>(SurveyStatus::Usable);
    timer.tsc_hz = row.result->estimate.hz;
    timer.ppm_vs_chosen = ppm_vs(timer.tsc_hz, tsc.hz);
  }
}

// The hwlat run over the survey window: gaps in the buffer, SMIs before and after.
void measure_gaps(const Machine& machine, format::SurveyBlock& block, format::SessionHeader& header) {
  config::Config config = machine.config;
  config.mode = format::CaptureMode::HwLat;
  config.probe = ProbeSource::Ivshmem;
  config.limit_ms = machine.config.limit_ms ? machine.config.limit_ms : kDefaultWindowMs;
  config.keyboard = false;
  if (config.hwlat_threshold_ns == 0) config.hwlat_threshold_ns = config::kDefaultHwlatThresholdNs;
  auto probe = engine::open_probe(config);  // reads no probe; only the ivshmem control block, if any
  const engine::Probe none{};
  console::print("ETT: survey: hwlat run of %u ms (gaps above %u ns), SMIs counted over it\n",
                 config.limit_ms, config.hwlat_threshold_ns);
  const engine::EngineResult run = engine::run_engine(config, probe ? *probe : none, machine.cpu,
                                                      machine.tsc.hz, nullptr, machine.buffer, 0);
  block.hwlat_window_ms = config.limit_ms;
  block.hwlat_threshold_ns = config.hwlat_threshold_ns;
  block.hwlat_gaps = run.capture.event_count;
  for (uint64_t i = 0; i < run.capture.event_count; ++i) {
    const uint32_t gap = machine.buffer.begin()[i].aux;
    ++block.gap_histogram[gap_bin(gap)];
    if (gap > block.hwlat_max_gap_ticks) block.hwlat_max_gap_ticks = gap;
  }
  header.hwlat_threshold_ns = config.hwlat_threshold_ns;
  header.limit_ms = config.limit_ms;
  header.loop_iterations = run.capture.iterations;
  header.capture_start_tsc = run.capture.start_tsc;
  header.capture_end_tsc = run.capture.end_tsc;
  header.stop_reason = static_cast<uint32_t>(run.capture.stop_reason);
  if (run.smi_valid) {
    block.smi_window_ms = config.limit_ms;
    header.smi_count = run.smi_count;
    header.flags |= format::kFlagSmiCount;
  }
}

const char* status_name(uint32_t status) {
  switch (static_cast<SurveyStatus>(status)) {
    case SurveyStatus::Absent:
      return "absent";
    case SurveyStatus::Usable:
      return "usable";
    case SurveyStatus::Failed:
      return "failed";
    case SurveyStatus::Refused:
      return "refused";
  }
  return "unknown";
}

const char* interface_name(uint32_t interface) {
  switch (static_cast<format::DiskInterface>(interface)) {
    case format::DiskInterface::Ide:
      return "ide";
    case format::DiskInterface::Ahci:
      return "ahci";
    case format::DiskInterface::Nvme:
      return "nvme";
  }
  return "unknown";
}

}  // namespace

void run(const Machine& machine, format::SurveyBlock& block, format::SessionHeader& header) {
  fill_timers(machine.tsc, block);
  block.usable_memory_bytes = machine.usable_memory_bytes;
  block.buffer_capacity = machine.buffer.capacity();
  block.keyboard = static_cast<uint32_t>(machine.no_keyboard ? SurveyStatus::Absent : SurveyStatus::Usable);
  block.probe_count = 0;
  for (const Candidate& candidate : kCandidates) {
    console::print("ETT: survey: checking %s%s",
                   format::probe_source_name(static_cast<uint32_t>(candidate.source)),
                   candidate.base ? "" : "\n");
    if (candidate.base) console::print(" at I/O 0x%03x\n", candidate.base);
    check_probe(machine, candidate, block.probes[block.probe_count++]);
  }
  measure_gaps(machine, block, header);
  seal(block);
}

void print(const format::SurveyBlock& block, const format::SessionHeader& header) {
  console::print("ETT: survey: cpu %s \"%s\", tsc %llu Hz from the %s, %s\n", header.cpu_vendor,
                 header.cpu_brand, header.tsc_hz, format::tsc_method_name(header.tsc_method),
                 header.flags & format::kFlagInvariantTsc ? "invariant" : "NOT invariant");
  for (uint32_t i = 0; i < block.timer_count; ++i) {
    const format::SurveyTimer& t = block.timers[i];
    if (t.status == static_cast<uint32_t>(SurveyStatus::Usable))
      console::print("ETT: survey: timer %s: usable, tsc %llu Hz, %d ppm from the chosen rate\n",
                     format::tsc_method_name(t.method), t.tsc_hz, t.ppm_vs_chosen);
    else
      console::print("ETT: survey: timer %s: %s\n", format::tsc_method_name(t.method), status_name(t.status));
  }
  if (header.flags & format::kFlagSmiCount)
    console::print("ETT: survey: SMIs: %u in %u ms\n", header.smi_count, block.smi_window_ms);
  else
    console::print("ETT: survey: SMIs: not countable on this CPU\n");
  console::print("ETT: survey: hwlat: %llu gaps above %u ns in %u ms, longest %llu ticks\n", block.hwlat_gaps,
                 block.hwlat_threshold_ns, block.hwlat_window_ms, block.hwlat_max_gap_ticks);
  for (uint32_t bin = 0; bin < format::kSurveyGapBins; ++bin)
    if (block.gap_histogram[bin])
      console::print("ETT: survey: hwlat gaps of 2^%u ticks: %u\n", bin, block.gap_histogram[bin]);
  for (uint32_t i = 0; i < block.probe_count; ++i) {
    const format::SurveyProbe& p = block.probes[i];
    const char* name = format::probe_source_name(p.source);
    if (p.status != static_cast<uint32_t>(SurveyStatus::Usable)) {
      console::print("ETT: survey: probe %s 0x%x: %s: %s\n", name, p.address, status_name(p.status),
                     p.detail);
      continue;
    }
    char mode[24] = "";
    if (p.port_mode != 0xFFFFFFFFu) lib::format(mode, sizeof(mode), ", ECR mode %u", p.port_mode);
    console::print(
        "ETT: survey: probe %s 0x%x: usable, read %u/%u/%u ticks (min/median/max of %u), longest step %u "
        "ticks%s\n",
        name, p.address, p.read_ticks_min, p.read_ticks_median, p.read_ticks_max, p.reads, p.step_ticks_max,
        mode);
  }
  for (uint32_t i = 0; i < block.disk_count; ++i) {
    const format::SurveyDisk& d = block.disks[i];
    console::print("ETT: survey: disk %s %u: \"%s\", %llu sectors of %u bytes, %s\n",
                   interface_name(d.interface), d.port, d.model, d.sectors, d.logical_block_size,
                   d.status == static_cast<uint32_t>(SurveyStatus::Usable) ? "ETT trace disk"
                                                                           : "not labelled (never written)");
  }
  if (block.disk_count == 0) console::print("ETT: survey: disks: none found\n");
  console::print("ETT: survey: memory: %llu MiB for the capture buffer, %llu events\n",
                 block.usable_memory_bytes >> 20, block.buffer_capacity);
  console::print("ETT: survey: keyboard controller: %s\n", status_name(block.keyboard));
}

}  // namespace ett::survey
