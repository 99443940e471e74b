// main.cpp: the capture kernel's one run: boot checks, command line, TSC calibration, probe and disk checks,
// the capture loop, the dump, and the final RESULT line the harness waits for.
#include <stdint.h>

#include "arch/x86/cmos_rtc.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpu_info.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/multiboot.h"
#include "arch/x86/pit.h"
#include "arch/x86/tsc_clock.h"
#include "capture/capture_loop.h"
#include "capture/stop_rules.h"
#include "config/cmdline.h"
#include "drivers/ata_pio.h"
#include "drivers/console.h"
#include "drivers/ivshmem_probe.h"
#include "drivers/qemu_exit.h"
#include "dump/trace_disk.h"
#include "ett/result.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"
#include "lib/format.h"
#include "lib/memory_map.h"
#include "lib/text.h"
#include "lib/tsc_math.h"
#include "runtime/panic.h"
#include "runtime/runtime.h"

extern "C" char __kernel_end[];

namespace ett {

namespace {

using format::EventRecord;
using vprobe::KernelState;

// Below 4 GiB with a margin, so that a buffer's end pointer cannot wrap to 0 in this 32-bit kernel.
constexpr uint64_t kBufferCeiling = 0xFFFFF000;
constexpr uint64_t kMinBufferEvents = 1024;

// What the failure path needs to know.
volatile vprobe::Control* g_control = nullptr;
bool g_exit_qemu = false;

void set_state(KernelState state) {
  if (g_control) g_control->state = static_cast<uint32_t>(state);
}

[[noreturn]] void halt_or_exit(uint8_t exit_value) {
  if (g_exit_qemu) drivers::qemu_exit(exit_value);
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

// --- capture: one loop instantiation per layout and clock -------------------------------------------------

struct CaptureSetup {
  const drivers::IvshmemProbe* probe;
  uint64_t limit_ticks;
  capture::EventBuffer buffer;
};

template <format::Layout kLayout, typename Clock>
capture::CaptureResult capture_with(const CaptureSetup& setup) {
  drivers::IvshmemLines source{setup.probe->lines()};
  drivers::IvshmemHost host{setup.probe->control()};
  Clock event_clock;
  x86::TscClock deadline_clock;
  capture::StopRules stop(deadline_clock, host, setup.limit_ticks);
  return capture::run_capture<kLayout>(source, event_clock, stop, setup.buffer);
}

template <typename Clock>
capture::CaptureResult capture_layout(format::Layout layout, const CaptureSetup& setup) {
  switch (layout) {
    case format::Layout::Double2x4:
      return capture_with<format::Layout::Double2x4, Clock>(setup);
    case format::Layout::Single8x1:
      return capture_with<format::Layout::Single8x1, Clock>(setup);
    case format::Layout::Quad4x2:
      return capture_with<format::Layout::Quad4x2, Clock>(setup);
    case format::Layout::Byte1x8:
      return capture_with<format::Layout::Byte1x8, Clock>(setup);
  }
  panic("unknown layout");
}

// --- the run ------------------------------------------------------------------------------------------

struct Summary {
  uint64_t events;
  uint32_t session;
};

// The capture buffer: the largest free RAM above the kernel image that holds none of the loader's data.
capture::EventBuffer find_capture_buffer(const x86::multiboot::BootInfo& boot, uint64_t max_events) {
  const lib::PhysRange range =
      lib::largest_free_range(boot.ram, boot.ram_count, boot.loader, boot.loader_count,
                              reinterpret_cast<uintptr_t>(__kernel_end), kBufferCeiling, sizeof(EventRecord));
  uint64_t capacity = range.size() / sizeof(EventRecord);
  console::print("ETT: capture buffer at 0x%08llx, %llu MiB: %llu events\n", range.start, range.size() >> 20,
                 capacity);
  if (capacity > max_events) {
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
  const drivers::IvshmemProbe* probe;
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
  header.tsc_method = static_cast<uint32_t>(format::TscMethod::Pit);
  header.tsc_uncertainty_ppm = machine.tsc.uncertainty_ppm;
  header.buffer_capacity = buffer.capacity();
  header.probe_source = static_cast<uint32_t>(config.probe);
  header.layout = static_cast<uint32_t>(config.layout);
  header.mode = static_cast<uint32_t>(config.mode);
  header.probe_address = machine.probe->physical_address();
  header.filter_mask = 0xFF;
  header.limit_ms = config.limit_ms;
  header.flags = machine.cpu.invariant_tsc ? uint32_t{format::kFlagInvariantTsc} : 0u;
  lib::copy_text(header.cpu_vendor, sizeof(header.cpu_vendor), machine.cpu.vendor);
  lib::copy_text(header.cpu_brand, sizeof(header.cpu_brand), machine.cpu.brand);
  lib::copy_text(header.cmdline, sizeof(header.cmdline), boot.arguments);
  header.captured_at_unix = x86::CmosRtc::read_unix_time();
  return header;
}

Result<Summary> capture_and_dump(const Boot& boot, const config::Config& config, const Machine& machine,
                                 dump::TraceDisk* disk) {
  const drivers::IvshmemProbe& probe = *machine.probe;
  capture::EventBuffer buffer = find_capture_buffer(boot.info, disk ? disk->max_events() : UINT64_MAX);
  if (buffer.capacity() < kMinBufferEvents)
    return fail("no room for a capture buffer (RAM or trace disk full)");

  format::SessionHeader header = describe_session(boot, config, machine, buffer);

  g_control->tsc_hz = machine.tsc.hz;
  console::print("ETT: capturing: layout %s, limit %u ms, %s, %llu ms after kernel entry\n",
                 format::layout_name(header.layout), config.limit_ms,
                 machine.cpu.has_sse2 ? "lfence+rdtsc" : "rdtsc", ms_since(boot.entry_tsc, machine.tsc.hz));

  x86::cli();
  const CaptureSetup setup{&probe, config.limit_ms ? lib::ticks_for_ms(config.limit_ms, machine.tsc.hz) : 0,
                           buffer};
  const capture::CaptureResult result = machine.cpu.has_sse2
                                            ? capture_layout<x86::OrderedTscClock>(config.layout, setup)
                                            : capture_layout<x86::TscClock>(config.layout, setup);

  g_control->stop_reason = static_cast<uint32_t>(result.stop_reason);
  g_control->event_count = result.event_count;
  set_state(KernelState::Stopped);
  const uint64_t capture_ticks = result.end_tsc - result.start_tsc;
  console::print("ETT: captured %llu events (stop: %s)\n", result.event_count,
                 format::stop_reason_name(static_cast<uint32_t>(result.stop_reason)));
  console::print("ETT: %llu ms, %llu polls (%llu ticks per poll), lines 0x%02x -> 0x%02x\n",
                 lib::us_for_ticks(capture_ticks, machine.tsc.hz) / 1000, result.iterations,
                 result.iterations ? capture_ticks / result.iterations : 0, result.initial_lines,
                 result.final_lines);

  header.capture_start_tsc = result.start_tsc;
  header.capture_end_tsc = result.end_tsc;
  header.stop_reason = static_cast<uint32_t>(result.stop_reason);
  header.initial_lines = result.initial_lines;
  header.final_lines = result.final_lines;

  if (disk == nullptr) return Summary{result.event_count, 0};
  set_state(KernelState::Dumping);
  ETT_TRY(disk->write_session(header, buffer.begin(), result.event_count, machine.tsc.hz));
  return Summary{result.event_count, header.session_number};
}

Result<Summary> run(const Boot& boot, const config::Config& config) {
  Machine machine{};
  machine.cpu = x86::read_cpu_info();
  console::print("ETT: cpu %s \"%s\"%s\n", machine.cpu.vendor, machine.cpu.brand[0] ? machine.cpu.brand : "?",
                 machine.cpu.invariant_tsc ? " invariant-tsc" : "");
  if (!machine.cpu.has_tsc) return fail("this CPU has no time-stamp counter");

  ETT_TRY_ASSIGN(machine.tsc, x86::Pit::calibrate_tsc());
  console::print("ETT: tsc %llu Hz +-%u ppm (best of %u PIT one-shots of %llu us)\n", machine.tsc.hz,
                 machine.tsc.uncertainty_ppm, machine.tsc.rounds, machine.tsc.window_us);

  ETT_TRY_ASSIGN(const drivers::IvshmemProbe probe, drivers::IvshmemProbe::find());
  machine.probe = &probe;
  g_control = probe.control();
  g_control->magic = vprobe::kControlMagic;
  set_state(KernelState::Booting);
  console::print("ETT: probe ivshmem at PCI %02x:%02x.%x, shared memory at 0x%08x (%llu KiB)\n",
                 probe.pci_address().bus, probe.pci_address().slot, probe.pci_address().function,
                 probe.physical_address(), probe.size() / 1024);

  if (config.dump == config::DumpTarget::None) {
    console::write("ETT: dump=none: the events stay in RAM\n");
    return capture_and_dump(boot, config, machine, nullptr);
  }
  // The disk is checked before the capture: no events are taken that could not be kept.
  ETT_TRY_ASSIGN(drivers::AtaPio ata, drivers::AtaPio::open_primary_master(machine.tsc.hz));
  console::print("ETT: disk \"%s\", %llu sectors%s, %u sectors per write block\n", ata.model(),
                 ata.sector_count(), ata.has_lba48() ? ", LBA48" : "", ata.sectors_per_write_block());
  ETT_TRY_ASSIGN(dump::TraceDisk disk, dump::TraceDisk::open(ata));
  console::print("ETT: trace disk \"%.64s\": %u sessions, next is session %u at LBA %llu\n",
                 disk.label().name, disk.append_point().existing_sessions, disk.append_point().session_number,
                 disk.append_point().lba);
  return capture_and_dump(boot, config, machine, &disk);
}

}  // namespace

extern "C" [[noreturn]] void kernel_main(uint32_t magic, uint32_t info_address) {
  const uint64_t entry_tsc = x86::rdtsc();
  runtime::run_global_constructors();
  console::init();
  x86::install_exception_handlers();
  console::write("ETT: capture kernel (multiboot v1, i686)\n");

  auto boot = x86::multiboot::parse(magic, info_address);
  if (!boot) finish_failed(boot.error().message);
  console::print("ETT: command line \"%s\" from %s\n", boot->cmdline,
                 boot->loader_name[0] ? boot->loader_name : "an unnamed loader");
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

  const auto summary = run(Boot{*boot, arguments, entry_tsc}, *config);
  if (!summary) finish_failed(summary.error().message);

  g_control->session_number = summary->session;
  set_state(KernelState::Done);
  console::print("ETT: RESULT OK events=%llu session=%u\n", summary->events, summary->session);
  halt_or_exit(vprobe::kExitSuccess);
}

}  // namespace ett
