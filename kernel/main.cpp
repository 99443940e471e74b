// main.cpp: the capture kernel's one run: boot checks, command line, TSC calibration, probe and disk checks,
// the capture loop, the dump, and the final RESULT line the harness waits for.
#include <stdint.h>

#include "arch/x86/buffer_window.h"
#include "arch/x86/cmos_rtc.h"
#include "arch/x86/counter_calibration.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpu_info.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/gdt.h"
#include "arch/x86/local_apic.h"
#include "arch/x86/multiboot.h"
#include "arch/x86/pci.h"
#include "arch/x86/pit.h"
#include "arch/x86/tsc_calibration.h"
#include "arch/x86/tsc_clock.h"
#include "capture/capture_loop.h"
#include "capture/stop_rules.h"
#include "config/cmdline.h"
#include "drivers/console/console.h"
#include "drivers/input/ps2_presence.h"
#include "drivers/probe/ivshmem_probe.h"
#include "drivers/qemu_exit.h"
#include "drivers/usb/pci_handoff.h"
#include "dump/serial_dump.h"
#include "dump/trace_disk.h"
#include "engine/probe_engine.h"
#include "ett/result.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"
#include "lib/format.h"
#include "lib/memory_map.h"
#include "lib/text.h"
#include "lib/tsc_math.h"
#include "lib/tsc_reference.h"
#include "lib/tsc_warning.h"
#include "runtime/panic.h"
#include "runtime/runtime.h"
#include "survey/survey.h"
#include "ui/analysis_stage.h"

extern "C" char __kernel_end[];

namespace ett {

namespace {

using format::EventRecord;
using vprobe::KernelState;

#ifdef __x86_64__
// Any physical address: the buffer window maps the pieces wherever they are.
constexpr uint64_t kBufferCeiling = UINT64_MAX;
constexpr uint64_t kFourGiB = uint64_t{1} << 32;
// Physical addresses the kernel reaches as pointers: the identity map.
uint64_t pointer_ceiling() {
  return x86::identity_map_limit();
}
#else
// Below 4 GiB with a margin, so that a buffer's end pointer cannot wrap to 0 in this 32-bit kernel.
constexpr uint64_t kBufferCeiling = 0xFFFFF000;
uint64_t pointer_ceiling() {
  return kBufferCeiling;
}
#endif
constexpr uint64_t kMinBufferEvents = 1024;

// What the failure path needs to know.
volatile vprobe::Control* g_control = nullptr;
bool g_exit_qemu = false;
engine::Probe g_probe{};  // the opened probe: an lpt port is restored only when the kernel exits to QEMU

void set_state(KernelState state) {
  if (g_control) g_control->state = static_cast<uint32_t>(state);
}

[[noreturn]] void halt_or_exit(uint8_t exit_value) {
  // The kernel leaves the port for good only here. A halted PC keeps it as input (driving nothing) until
  // the firmware's next boot sets it up again.
  if (g_exit_qemu) {
    engine::close_probe(g_probe);
    drivers::qemu_exit(exit_value);
  }
  console::write("ETT: halted\n");
  x86::halt_forever();
}

[[noreturn]] void finish_failed(const char* message) {
  console::print("ETT: RESULT FAILED %s\n", message);
  set_state(KernelState::Failed);
  halt_or_exit(vprobe::kExitFailure);
}

uint64_t ms_since(uint64_t start_tsc, uint64_t tsc_hz) {
  return lib::us_for_ticks(x86::rdtsc() - start_tsc, tsc_hz) / 1000;
}

// --- capture: the loops and the probe sources are in engine/probe_engine.* -----------------------------

// --- the run ------------------------------------------------------------------------------------------

// With more reserved ranges than BootInfo holds, the ones dropped are unknown: stay below the lowest listed
// reserved range above the kernel (the map is usually sorted, so the dropped ones lie above it).
uint64_t first_reserved_start(const x86::multiboot::BootInfo& boot) {
  uint64_t lowest = kBufferCeiling;
  for (uint32_t i = 0; i < boot.reserved_count; ++i)
    if (boot.reserved[i].start >= reinterpret_cast<uintptr_t>(__kernel_end) &&
        boot.reserved[i].start < lowest)
      lowest = boot.reserved[i].start;
  return lowest;
}

// The capture buffer: the largest free RAM above the kernel image that holds none of the loader's data,
// capped at what the trace disk can take (`max_events`) so that a capture always fits. A disk with room
// for fewer than kMinBufferEvents is full: the capture uses all of RAM and its dump will be refused (the
// events stay in RAM, on the analysis screen).
// Every memory map entry that is not RAM (reserved, ACPI NVS, ...) is kept out too, even where an available
// entry overlaps it; memory the map does not list is never used.
// The x86-64 kernel maps every free piece (2 MiB aligned) one after another into one virtual range
// (arch/x86/buffer_window.h); buffer=above4g keeps only the pieces above 4 GiB. The i686 kernel takes the
// largest piece below 4 GiB.
capture::EventBuffer find_capture_buffer(const x86::multiboot::BootInfo& boot, const config::Config& config,
                                         uint64_t max_events) {
  static lib::PhysRange excluded[boot::kMaxLoaderRanges + boot::kMaxReservedRanges];
  size_t excluded_count =
      lib::append_ranges(excluded, 0, sizeof(excluded) / sizeof(excluded[0]), boot.loader, boot.loader_count);
  excluded_count = lib::append_ranges(excluded, excluded_count, sizeof(excluded) / sizeof(excluded[0]),
                                      boot.reserved, boot.reserved_count);
  if (boot.reserved_overflow)
    console::print(
        "ETT: WARNING: the memory map has more than %u reserved ranges: the buffer stays below the "
        "lowest of them\n",
        boot::kMaxReservedRanges);
  const uint64_t ceiling = boot.reserved_overflow ? first_reserved_start(boot) : kBufferCeiling;
#ifdef __x86_64__
  constexpr size_t kMaxPieces = 64;
  static lib::PhysRange pieces[kMaxPieces];
  const uint64_t floor = config.buffer == config::BufferPlacement::Above4G
                             ? kFourGiB
                             : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(__kernel_end));
  const size_t piece_count = lib::free_ranges(boot.ram, boot.ram_count, excluded, excluded_count, floor,
                                              ceiling, x86::kBufferPageBytes, pieces, kMaxPieces);
  if (config.buffer == config::BufferPlacement::Split)  // each piece's first page: captures cross pieces soon
    for (size_t i = 0; i < piece_count; ++i) pieces[i].end = pieces[i].start + x86::kBufferPageBytes;
  for (size_t i = 0; i < piece_count; ++i)
    console::print("ETT: capture buffer piece %u: 0x%llx-0x%llx, %llu MiB\n", static_cast<uint32_t>(i + 1),
                   pieces[i].start, pieces[i].end, pieces[i].size() >> 20);
  const uint64_t bytes = x86::map_buffer_window(pieces, piece_count);
  if (const size_t bad = x86::check_buffer_window(pieces, piece_count, bytes); bad != 0) {
    console::print("ETT: the capture buffer's page tables do not map piece %u where they should\n",
                   static_cast<uint32_t>(bad));
    return capture::EventBuffer(nullptr, 0);
  }
  const lib::PhysRange range{x86::kBufferWindowBase, x86::kBufferWindowBase + bytes};
  uint64_t capacity = bytes / sizeof(EventRecord);
  console::print("ETT: capture buffer: %u pieces mapped at 0x%llx, %llu MiB: %llu events\n",
                 static_cast<uint32_t>(piece_count), range.start, bytes >> 20, capacity);
#else
  if (config.buffer != config::BufferPlacement::All)
    console::print("ETT: WARNING: buffer=above4g and buffer=split need the x86-64 kernel: ignored\n");
  const lib::PhysRange range =
      lib::largest_free_range(boot.ram, boot.ram_count, excluded, excluded_count,
                              reinterpret_cast<uintptr_t>(__kernel_end), ceiling, sizeof(EventRecord));
  uint64_t capacity = range.size() / sizeof(EventRecord);
  console::print("ETT: capture buffer at 0x%08llx, %llu MiB: %llu events\n", range.start, range.size() >> 20,
                 capacity);
#endif
  if (max_events < kMinBufferEvents) {
    console::print("ETT: the trace disk is full (room for %llu events): the capture will stay in RAM\n",
                   max_events);
  } else if (capacity > max_events) {
    capacity = max_events;
    console::print("ETT: the trace disk has room for %llu events: capturing at most that many\n", capacity);
  }
  return capture::EventBuffer(reinterpret_cast<EventRecord*>(static_cast<uintptr_t>(range.start)),
                              static_cast<size_t>(capacity));
}

// What is known once the machine is checked, before the disk.
struct Machine {
  x86::CpuInfo cpu;
  x86::TscCalibration tsc;
  engine::Probe probe;
};

// What the run needs from the boot: the command line it was given, and the RAM to capture into.
struct Boot {
  const x86::multiboot::BootInfo& info;
  const char* arguments;  // the command line without the kernel path
  uint64_t entry_tsc;
};

// Everything the session header says that is known before the capture starts.
format::SessionHeader describe_session(const Boot& boot, const config::Config& config, const Machine& machine,
                                       const capture::EventBuffer& buffer) {
  format::SessionHeader header{};
  header.tsc_hz = machine.tsc.hz;
  header.tsc_method = static_cast<uint32_t>(machine.tsc.method);
  header.tsc_uncertainty_ppm = machine.tsc.uncertainty_ppm;
  const lib::ReferenceResult& pit = machine.tsc.results[static_cast<uint32_t>(lib::Reference::Pit)];
  header.tsc_hz_pit = pit.problem ? 0 : pit.estimate.hz;
  header.buffer_capacity = buffer.capacity();
  header.probe_source = static_cast<uint32_t>(config.probe);
  header.layout = static_cast<uint32_t>(config.layout);
  header.mode = static_cast<uint32_t>(config.mode);
  header.probe_address = machine.probe.address;
  header.filter_mask = config.filter_mask;
  header.limit_ms = config.limit_ms;
  header.flags = machine.cpu.invariant_tsc ? uint32_t{format::kFlagInvariantTsc} : 0u;
  lib::copy_text(header.cpu_vendor, sizeof(header.cpu_vendor), machine.cpu.vendor);
  lib::copy_text(header.cpu_brand, sizeof(header.cpu_brand), machine.cpu.brand);
  lib::copy_text(header.cmdline, sizeof(header.cmdline), boot.arguments);
  header.captured_at_unix = x86::CmosRtc::read_unix_time();
  return header;
}

// One capture, kept in RAM until it is saved or the next capture starts.
struct Capture {
  capture::EventBuffer buffer;
  format::SessionHeader header;
  uint64_t event_count;
  capture::StallLog stalls;  // its stall records go into the session's stall table
};

// bench=N: the loop benchmark's windows, one line each, for bench/capture_loop_bench.py.
void run_bench(const config::Config& config, const Machine& machine, const capture::EventBuffer& buffer) {
  static engine::BenchWindow windows[config::kMaxBenchWindows];
  console::print("ETT: bench: %u window pairs of %u ms (the capture loop, then the bare poll floor)\n",
                 config.bench_windows, engine::kBenchWindowMs);
  const uint32_t done = engine::run_bench(config, machine.probe, machine.cpu, machine.tsc.hz, windows,
                                          config.bench_windows, buffer);
  for (uint32_t i = 0; i < done; ++i)
    console::print(
        "ETT: bench window %u: loop %llu polls %llu ticks fastest %llu%s, "
        "floor %llu polls %llu ticks fastest %llu%s\n",
        i + 1, windows[i].loop_polls, windows[i].loop_ticks, windows[i].loop_fastest_round,
        windows[i].loop_stalled ? " stalled" : "", windows[i].floor_polls, windows[i].floor_ticks,
        windows[i].floor_fastest_round, windows[i].floor_stalled ? " stalled" : "");
  if (done < config.bench_windows)
    console::print("ETT: bench: stopped after %u window pairs: the lines changed\n", done);
  console::print("ETT: bench done\n");
}

// The capture's own error: its check intervals and the stalls among them (capture/stall_log.h).
void report_stalls(const capture::StallLog& stalls, uint64_t tsc_hz) {
  console::print(
      "ETT: check intervals: %llu, typical %llu ticks, longest %llu ticks (%llu us); stalls (> %llu "
      "ticks): %u, longest %llu us, %u records\n",
      stalls.intervals(), stalls.typical_interval(), stalls.longest_interval(),
      lib::us_for_ticks(stalls.longest_interval(), tsc_hz), stalls.threshold(), stalls.count(),
      lib::us_for_ticks(stalls.longest_stall(), tsc_hz), stalls.size());
}

// held_key: the key that started the capture on the start screen (0: none); see engine::run_engine.
Result<Capture> capture_once(const Boot& boot, const config::Config& config, const Machine& machine,
                             const dump::TraceDisk* disk, uint8_t held_key) {
  capture::EventBuffer buffer =
      find_capture_buffer(boot.info, config, disk ? disk->max_events() : UINT64_MAX);
  if (buffer.capacity() < kMinBufferEvents) return fail("no room for a capture buffer in RAM");
  static bool benched = false;  // once per boot, before the first capture
  if (config.bench_windows != 0 && !benched) {
    benched = true;
    run_bench(config, machine, buffer);
  }

  format::SessionHeader header = describe_session(boot, config, machine, buffer);

  g_control->tsc_hz = machine.tsc.hz;
  g_control->command =
      static_cast<uint32_t>(vprobe::HostCommand::None);  // a stop meant for an earlier capture
  // Input and checked before every capture: the port stays input between captures (the analysis stage may
  // last hours), and something may have changed it since the last check.
  ETT_TRY(engine::arm_probe(config, machine.probe));
  console::print("ETT: capturing: layout %s, limit %u ms, %s, %llu ms after kernel entry\n",
                 format::layout_name(header.layout), config.limit_ms,
                 machine.cpu.has_sse2 ? "lfence+rdtsc" : "rdtsc", ms_since(boot.entry_tsc, machine.tsc.hz));

  // Devices the firmware left bus-mastering write into RAM behind the capture's back: stopped meanwhile
  // (x86::pci::keeps_bus_master says which stay on). Without a PCI probe, probe.pci is 00:00.0, the host
  // bridge, which stays on anyway.
  static x86::pci::QuiescedDevice quiesced[64];
  const uint32_t quiesced_count = x86::pci::quiesce_bus_masters(true, machine.probe.pci, quiesced, 64);
  if (quiesced_count)
    console::print(
        "ETT: bus mastering off on %u PCI devices the kernel does not use, until the capture ends\n",
        quiesced_count);
  const engine::EngineResult run = engine::run_engine(config, machine.probe, machine.cpu, machine.tsc.hz,
                                                      machine.probe.control, buffer, held_key);
  x86::pci::restore_bus_masters(quiesced, quiesced_count);
  const capture::CaptureResult& result = run.capture;
  engine::describe(config, machine.probe, run, header);

  g_control->stop_reason = static_cast<uint32_t>(result.stop_reason);
  g_control->event_count = result.event_count;
  set_state(KernelState::Stopped);
  const uint64_t capture_ticks = result.end_tsc - result.armed_tsc;
  console::print("ETT: captured %llu events (stop: %s)\n", result.event_count,
                 format::stop_reason_name(static_cast<uint32_t>(result.stop_reason)));
  console::print("ETT: %llu ms, %llu polls (%llu ticks per poll), lines 0x%02x -> 0x%02x\n",
                 lib::us_for_ticks(capture_ticks, machine.tsc.hz) / 1000, result.iterations,
                 result.iterations ? capture_ticks / result.iterations : 0, result.initial_lines,
                 result.final_lines);
  report_stalls(run.stalls, machine.tsc.hz);
  if (result.triggered && config.trigger_enabled)
    console::print("ETT: triggered %llu ms after the start, %llu events kept from before the trigger\n",
                   lib::us_for_ticks(result.start_tsc - result.armed_tsc, machine.tsc.hz) / 1000,
                   result.pretrigger_events);
  if (config.mode == format::CaptureMode::Calibrate)
    console::print(
        "ETT: calibrate: floor (bare poll loop) %u.%03u ticks per poll; loop %llu.%03llu ticks per step\n",
        run.floor_milliticks / 1000, run.floor_milliticks % 1000,
        result.iterations ? capture_ticks / result.iterations : 0,
        result.iterations ? capture_ticks * 1000 / result.iterations % 1000 : 0);
  if (config.mode == format::CaptureMode::HwLat)
    console::print("ETT: hwlat: %llu gaps above %u ns in %llu clock reads; SMIs: %s%u\n", result.event_count,
                   header.hwlat_threshold_ns, result.iterations, run.smi_valid ? "" : "not available ",
                   run.smi_count);

  header.capture_start_tsc = result.start_tsc;
  header.capture_end_tsc = result.end_tsc;
  header.stop_reason = static_cast<uint32_t>(result.stop_reason);
  header.initial_lines = result.initial_lines;
  header.final_lines = result.final_lines;
  return Capture{buffer, header, result.event_count, run.stalls};
}

// Everything a save needs, for the analysis stage's S key.
struct SaveJob {
  Capture* capture;
  const config::Config* config;
  const Machine* machine;
  dump::TraceDisk* disk;     // dump=ata
  dump::SerialDump* serial;  // dump=serial
};

// Writes the capture as a new session (disk or serial); returns its number.
Result<uint32_t> save_capture(SaveJob& job) {
  Capture& capture = *job.capture;
  set_state(KernelState::Dumping);
  if (job.disk) {
    ETT_TRY(job.disk->write_session(capture.header, capture.buffer.begin(), capture.event_count,
                                    capture.stalls.records(), capture.stalls.size(), job.machine->tsc.hz));
  } else if (job.serial) {
    job.serial->write_session(capture.header, capture.buffer.begin(), capture.event_count,
                              capture.stalls.records(), capture.stalls.size());
  } else {
    return fail("dump=none: the events stay in RAM");
  }
  g_control->session_number = capture.header.session_number;
  set_state(KernelState::Done);
  return capture.header.session_number;
}

ui::SaveOutcome save_from_analysis(void* context) {
  static char message[ui::kStatusLength];
  auto saved = save_capture(*static_cast<SaveJob*>(context));
  if (!saved) {
    set_state(KernelState::Stopped);
    lib::format(message, sizeof(message), "not saved: %s", saved.error().message);
    return {false, message};
  }
  lib::format(message, sizeof(message), "saved as session %u", *saved);
  return {true, message};
}

void report_ok(uint64_t events, uint32_t session) {
  console::print("ETT: RESULT OK events=%llu session=%u\n", events, session);
  if (g_exit_qemu) halt_or_exit(vprobe::kExitSuccess);
}

// MSR_SMI_COUNT at boot: SMIs steal time from the capture loop; the count says whether firmware takes them.
void report_smi_count(const x86::CpuInfo& cpu) {
  if (!cpu.has_smi_count) {
    console::print("ETT: SMI count: not available (no MSR_SMI_COUNT on %s family %u model 0x%02x)\n",
                   cpu.vendor, cpu.family, cpu.model);
    return;
  }
  const auto count = x86::read_msr_safe(x86::kMsrSmiCount);
  if (!count)
    console::print("ETT: SMI count: not available (%s)\n", count.error().message);
  else
    console::print("ETT: SMI count: %llu since reset\n", *count & 0xFFFFFFFFull);
}

void warn_if_tsc_not_invariant(const x86::CpuInfo& cpu) {
  if (const char* const* lines = lib::tsc_warning_lines(cpu.invariant_tsc))
    for (; *lines; ++lines) console::print("%s\n", *lines);
}

// Every reference's result, so that they can be compared, then the one used. One "best of N x M ms" for all:
static_assert(x86::Pit::kRounds == x86::kCounterRounds, "the PIT and the counters run as many rounds");

void report_calibration(const x86::TscCalibration& tsc) {
  const acpi::Timers& timers = tsc.timers;
  for (uint32_t i = lib::kReferenceCount; i-- > 0;) {  // PIT, PM timer, HPET: the order they ran in
    const auto reference = static_cast<lib::Reference>(i);
    const lib::ReferenceResult& result = tsc.results[i];
    char where[64] = "";
    if (reference == lib::Reference::PmTimer && !timers.pm_timer_missing)
      lib::format(where, sizeof(where), " (port 0x%x, %u-bit)", timers.pm_timer.port, timers.pm_timer.bits);
    if (reference == lib::Reference::Hpet && !timers.hpet_missing)
      lib::format(where, sizeof(where), " (0x%08llx, period %u fs)", timers.hpet_base, tsc.hpet_period_fs);
    if (result.problem) {
      console::print("ETT: tsc vs %s%s: not available: %s\n", lib::reference_name(reference), where,
                     result.problem);
      continue;
    }
    console::print("ETT: tsc vs %s%s: %llu Hz +-%u ppm (best of %u x %u ms), %u ppm from the %s\n",
                   lib::reference_name(reference), where, result.estimate.hz, result.estimate.uncertainty_ppm,
                   x86::kCounterRounds, x86::kCounterWindowMs,
                   lib::difference_ppm(result.estimate, tsc.choice.estimate),
                   lib::reference_name(tsc.choice.reference));
  }
  if (tsc.nominal.problem)
    console::print("ETT: tsc nominal rate: not available: %s\n", tsc.nominal.problem);
  else
    console::print("ETT: tsc nominal rate: %llu Hz +-%u ppm from %s\n", tsc.nominal.estimate.hz,
                   tsc.nominal.estimate.uncertainty_ppm, tsc.nominal_source);
  if (tsc.method == format::TscMethod::Cpuid) {
    console::print(
        "ETT: WARNING: no reference timer answered: the TSC rate is the nominal one from %s (+-%u ppm), "
        "not a measurement\n",
        tsc.nominal_source, tsc.uncertainty_ppm);
    return;
  }
  if (tsc.choice.disagree)
    console::print(
        "ETT: WARNING: the reference timers disagree by up to %u ppm: the uncertainty is widened to it\n",
        tsc.choice.disagreement_ppm);
  console::print(
      "ETT: tsc %llu Hz +-%u ppm from the %s (preferred: HPET, ACPI PM timer, PIT; the first that "
      "agrees with another)\n",
      tsc.hz, tsc.uncertainty_ppm, lib::reference_name(tsc.choice.reference));
}

// The other processors into wait-for-SIPI before anything is captured (arch/x86/local_apic.h).
void park_other_cpus(const acpi::LoaderRsdp& loader, uint64_t tsc_hz) {
  auto parked = x86::LocalApic::park_other_cpus(loader, tsc_hz);
  if (!parked)
    console::print("ETT: cpus: the other processors are not parked: %s\n", parked.error().message);
  else if (parked->cpus == 0)
    console::print("ETT: cpus: not counted: %s\n", parked->problem);
  else
    console::print("ETT: cpus: %u, %u parked with INIT%s%s%s\n", parked->cpus, parked->parked,
                   parked->problem ? " (" : "", parked->problem ? parked->problem : "",
                   parked->problem ? ")" : "");
}

// Whether there is a keyboard to wait for: the FADT's IAPC_BOOT_ARCH 8042 flag, then the controller itself.
// nullptr when there is one, otherwise why not (shown on the start screen and the analysis stage).
const char* find_no_keyboard(const acpi::Timers& acpi, uint64_t tsc_hz) {
  if (acpi.keyboard == acpi::Keyboard8042::Absent) return "ACPI says this PC has no 8042 keyboard controller";
  auto present = drivers::Ps2Presence::check(tsc_hz);
  return present ? nullptr : present.error().message;
}

// The start screen's description of what will happen; returns the make code of the key that started it (0
// without a keyboard).
uint8_t show_start_screen(const config::Config& config, const dump::TraceDisk* disk, const char* warning,
                          const char* no_keyboard) {
  static char target[ui::kStatusLength];
  if (disk)
    lib::format(target, sizeof(target), "  Trace disk: %s, \"%.40s\", next session %u, room for %llu events",
                disk->where(), disk->label().name, disk->append_point().session_number, disk->max_events());
  else
    lib::format(
        target, sizeof(target), "  Dump: %s",
        config.dump == config::DumpTarget::Serial ? "serial (COM1)" : "none (the events stay in RAM)");
  const char* lines[] = {
      target, "", "  The capture polls the probe lines with interrupts off and stops on limit=,",
      "  a host stop request or a full buffer; then the analysis stage shows the events.", nullptr};
  return ui::run_start_screen(lines, warning, no_keyboard);
}

// mode=survey (survey/survey.h): every disk listed, every check run, the block written as a session to the
// trace disk when there is one (never to another disk), the text summary last, then the RESULT line.
Status run_survey(const Boot& boot, const config::Config& config, const Machine& machine,
                  const char* no_keyboard) {
  alignas(16) static format::SurveyBlock block;
  block = {};
  block.disk_count = dump::TraceDisk::census(machine.tsc.hz, block.disks, format::kSurveyMaxDisks);
  const capture::EventBuffer buffer = find_capture_buffer(boot.info, config, UINT64_MAX);
  if (buffer.capacity() < kMinBufferEvents) return fail("no room for the survey's runs in RAM");
  format::SessionHeader header = describe_session(boot, config, machine, buffer);
  header.probe_address = 0;
  survey::run(
      {config, machine.cpu, machine.tsc, no_keyboard, buffer, buffer.capacity() * sizeof(EventRecord)}, block,
      header);
  uint32_t session = 0;
  if (config.dump == config::DumpTarget::Ata) {
    auto disk = dump::TraceDisk::find(machine.tsc.hz);
    if (disk) {
      ETT_TRY(disk->write_survey(header, block, machine.tsc.hz));
      session = header.session_number;
    } else {
      console::print("ETT: survey: no trace disk (%s): the survey is on the screen and serial only\n",
                     disk.error().message);
    }
  } else {
    console::write("ETT: survey: dump is not ata: the survey is on the screen and serial only\n");
  }
  survey::print(block, header);
  if (session)
    console::print("ETT: survey: written as session %u of the trace disk; `ett survey` reads it\n", session);
  console::print("ETT: survey: done %llu ms after kernel entry\n", ms_since(boot.entry_tsc, machine.tsc.hz));
  console::print("ETT: RESULT OK events=0 session=%u\n", session);
  halt_or_exit(vprobe::kExitSuccess);
}

Status run(const Boot& boot, config::Config config, const x86::CpuInfo& cpu) {
  Machine machine{};
  machine.cpu = cpu;
  warn_if_tsc_not_invariant(machine.cpu);
  const acpi::LoaderRsdp loader_rsdp{boot.info.rsdp, boot.info.rsdp_length};
  ETT_TRY_ASSIGN(machine.tsc, x86::calibrate_tsc(machine.cpu, loader_rsdp));
  console::print("ETT: ACPI RSDP from %s\n",
                 machine.tsc.timers.rsdp_source ? machine.tsc.timers.rsdp_source : "nowhere (none found)");
  report_calibration(machine.tsc);
  park_other_cpus(loader_rsdp, machine.tsc.hz);
  // Before the keyboard check: once the firmware's USB legacy support lets go, an 8042 it only emulated is
  // gone.
  // usb=keep (and usb=auto in a run that needs a keyboard) leaves the controllers to the firmware, so that a
  // USB keyboard keeps working.
  if (!config::takes_usb(config))
    console::write(
        "ETT: USB controllers left to the firmware (usb=keep, or usb=auto with a keyboard needed): a USB "
        "keyboard works, and the SMIs of its legacy support, if on, stay; usb=take stops them\n");
  else if (drivers::usb::hand_off_all_controllers(machine.tsc.hz).firmware_active != 0)
    console::write(
        "ETT: USB legacy support was on: its SMIs are off now, and a USB keyboard no longer works\n");

  // No keyboard: nobody can press Enter or S, so the run is unattended, as with auto=1.
  const char* no_keyboard = find_no_keyboard(machine.tsc.timers, machine.tsc.hz);
  if (no_keyboard) {
    console::print("ETT: no keyboard: %s: starting at once and saving by itself, as with auto=1%s\n",
                   no_keyboard, config.keyboard ? " (keyboard=1 cannot stop it)" : "");
    config.auto_start = true;
    config.keyboard = false;
  }
  if (config.mode == format::CaptureMode::Survey) return run_survey(boot, config, machine, no_keyboard);

  ETT_TRY_ASSIGN(machine.probe, engine::open_probe(config));
  g_probe = machine.probe;
  static vprobe::Control no_virtual_probe{};  // lpt sources without ivshmem: nobody reads the handshake
  g_control = machine.probe.control ? machine.probe.control : &no_virtual_probe;
  g_control->magic = vprobe::kControlMagic;
  set_state(KernelState::Booting);

  // The disk is found and checked before the capture: a disk without the label is never written.
  dump::TraceDisk* disk = nullptr;
  if (config.dump == config::DumpTarget::None) console::write("ETT: dump=none: the events stay in RAM\n");
  Result<dump::TraceDisk> found = config.dump == config::DumpTarget::Ata
                                      ? dump::TraceDisk::find(machine.tsc.hz)
                                      : Result<dump::TraceDisk>(fail("no trace disk (dump is not ata)"));
  if (config.dump == config::DumpTarget::Ata) {
    if (!found) return found.failure();
    disk = &*found;
    console::print("ETT: trace disk \"%.64s\" (%s): %u sessions, next is session %u at LBA %llu\n",
                   disk->label().name, disk->where(), disk->append_point().existing_sessions,
                   disk->append_point().session_number, disk->append_point().lba);
  }
  dump::SerialDump serial;
  const bool unattended = config::unattended(config);
  for (bool first = true;; first = false) {
    uint8_t held_key = 0;
    if (!unattended || !first || no_keyboard)
      held_key =
          show_start_screen(config, disk, lib::tsc_screen_warning(machine.cpu.invariant_tsc), no_keyboard);
    ETT_TRY_ASSIGN(Capture capture, capture_once(boot, config, machine, disk, held_key));
    SaveJob job{&capture, &config, &machine, disk,
                config.dump == config::DumpTarget::Serial ? &serial : nullptr};
    ui::CaptureView view{capture.buffer.begin(),
                         capture.event_count,
                         capture.header.capture_start_tsc,
                         machine.tsc.hz,
                         capture.header.stop_reason,
                         false,
                         "",
                         lib::tsc_title_warning(machine.cpu.invariant_tsc),
                         no_keyboard};
    if (unattended && first) {
      // Unattended: the dump is automatic and the RESULT line is what the harness waits for.
      if (config.dump == config::DumpTarget::None) {
        set_state(KernelState::Done);
        report_ok(capture.event_count, 0);
      } else {
        auto saved = save_capture(job);
        if (!saved) {
          if (g_exit_qemu) return saved.failure();
          console::print("ETT: RESULT FAILED %s\n", saved.error().message);
          set_state(KernelState::Failed);
          view.status = saved.error().message;
        } else {
          view.saved = true;
          report_ok(capture.event_count, *saved);
        }
      }
    }
    ui::run_analysis_stage(view, config.dump == config::DumpTarget::None ? nullptr : save_from_analysis,
                           &job);
  }
}

// VGA text unless the loader set up a graphics mode (UEFI GOP, VBE), which gets the framebuffer console.
void use_screen(const boot::Framebuffer& fb) {
  switch (fb.kind) {
    case boot::FramebufferKind::None:
    case boot::FramebufferKind::VgaText:
      console::use_vga_text();
      return;
    case boot::FramebufferKind::Rgb:
      break;
    case boot::FramebufferKind::Indexed:
      console::write("ETT: no screen: the loader's framebuffer uses a palette (output on serial only)\n");
      return;
  }
  if (fb.address + uint64_t{fb.pitch} * fb.height > pointer_ceiling()) {
    // A discrete GPU with Resizable BAR under UEFI: the whole VRAM BAR lies above 4 GiB, and the firmware
    // only puts it there with "Above 4G decoding" on.
    console::write(
        "ETT: no screen: the framebuffer lies above 4 GiB, out of reach of this 32-bit kernel without paging "
        "(turn off \"Above 4G decoding\" and \"Resizable BAR\" in the firmware setup, or use the on-board "
        "graphics); output on serial only\n");
    return;
  }
  const drivers::PixelFormat format{static_cast<uint8_t>((fb.bpp + 7) / 8),
                                    fb.red_position,
                                    fb.red_size,
                                    fb.green_position,
                                    fb.green_size,
                                    fb.blue_position,
                                    fb.blue_size};
  console::use_framebuffer({reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(fb.address)), fb.pitch,
                            fb.width, fb.height, format});
}

}  // namespace

extern "C" [[noreturn]] void kernel_main(uint32_t magic, uint32_t info_address) {
  x86::Gdt::load();  // before the IDT: its gates name the kernel's code selector
  runtime::run_global_constructors();
  console::init();
  x86::install_exception_handlers();

  auto boot = x86::multiboot::parse(magic, info_address);
  if (!boot) {
    console::use_vga_text();  // a guess, but the failure should be seen on a BIOS PC's screen too
    finish_failed(boot.error().message);
  }
  use_screen(boot->framebuffer);
  // Which build runs: the i686 kernel (any x86 with a TSC) or the x86-64 one (arch/x86/buffer_window.h).
  constexpr const char* kBuild = sizeof(void*) == 8 ? "x86-64, long mode" : "i586 and later";
  console::print("ETT: capture kernel (multiboot v%u, %s), screen: %s\n", boot->protocol, kBuild,
                 console::screen_name());
  console::print("ETT: command line \"%s\" from %s\n", boot->cmdline,
                 boot->loader_name[0] ? boot->loader_name : "an unnamed loader");
#ifdef __x86_64__
  // boot/multiboot64.S: 1 GiB pages (512 GiB) where the CPU has them, else 2 MiB pages (64 GiB).
  console::print("ETT: long mode: identity map of the first %llu GiB in %s pages\n",
                 x86::identity_map_limit() >> 30,
                 x86::identity_map_limit() > (uint64_t{64} << 30) ? "1 GiB" : "2 MiB");
#endif
  const char* arguments = config::kernel_arguments(boot->cmdline, boot->loader_name);

  auto config = config::parse_cmdline(arguments);
  if (!config) {
    g_exit_qemu = config::has_word(arguments, "exit=qemu");
    set_panic_exits_qemu(g_exit_qemu);
    char message[192];
    lib::format(message, sizeof(message), "bad command line: %s", config.error().message);
    finish_failed(message);
  }
  g_exit_qemu = config->exit == config::ExitAction::Qemu;
  set_panic_exits_qemu(g_exit_qemu);

  // Nothing above reads the TSC: on a CPU without one, rdtsc is an invalid opcode.
  const x86::CpuInfo cpu = x86::read_cpu_info();
  console::print("ETT: cpu %s \"%s\" family %u%s%s\n", cpu.has_cpuid ? cpu.vendor : "(no CPUID)",
                 cpu.brand[0] ? cpu.brand : "?", cpu.family, cpu.has_sse2 ? " sse2" : "",
                 cpu.invariant_tsc ? " invariant-tsc" : "");
  if (const char* reason = x86::unsupported_cpu_reason(cpu)) finish_failed(reason);
  const uint64_t entry_tsc = x86::rdtsc();
  report_smi_count(cpu);

  // run() returns only when it failed: otherwise it exits QEMU (exit=qemu) or stays in the analysis stage.
  const Status status = run(Boot{*boot, arguments, entry_tsc}, *config, cpu);
  finish_failed(status.error().message);
}

}  // namespace ett
