// probe_engine.cpp: probe sources, and one loop instantiation per source, clock, layout and filter setting.
#include "engine/probe_engine.h"

#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/tsc_clock.h"
#include "capture/stop_rules.h"
#include "drivers/console/console.h"
#include "drivers/console/serial_port.h"
#include "drivers/input/ps2_stop_key.h"
#include "drivers/probe/ivshmem_probe.h"
#include "drivers/probe/parallel_port.h"
#include "drivers/probe/pci_lpt.h"
#include "drivers/probe/pci_uart.h"
#include "drivers/probe/port_lines.h"
#include "drivers/probe/uart_lines.h"
#include "drivers/probe/uart_probe.h"
#include "lib/format.h"
#include "lib/tsc_math.h"
#include "runtime/panic.h"

namespace ett::engine {

namespace {

using capture::CaptureResult;
using drivers::ParallelPort;

// The control block for runs without a virtual probe: the loop's host stop reads it and never sees a request.
vprobe::Control g_no_host_control{};

struct RunSetup {
  const config::Config& config;
  capture::CaptureOptions options;
  uint64_t limit_ticks;
  uint64_t hwlat_threshold_ticks;
  uint64_t stall_floor_ticks;
  volatile vprobe::Control* control;
  capture::EventBuffer buffer;
  drivers::Ps2StopKey* keyboard;  // keyboard=1, else nullptr
};

// The typical check interval for the stall log: 1024 bare polls (a stop check's worth), the shortest of a
// few tries so that one interrupted try does not count. 0 when the lines changed meanwhile (the log then
// takes its first interval instead).
template <typename Clock, typename Source>
uint64_t typical_check_ticks(Source source, uint32_t interval_polls) {
  uint64_t best = 0;
  for (int i = 0; i < 4; ++i) {
    const uint64_t ticks = capture::bare_poll_ticks(source, Clock{}, interval_polls);
    if (ticks != 0 && (best == 0 || ticks < best)) best = ticks;
  }
  return best;
}

template <typename Clock>
struct Loops {
  using Stop = capture::StopRules<x86::TscClock, drivers::IvshmemHost, drivers::Ps2StopKey>;

  template <format::Layout kLayout, bool kFiltered, typename Source>
  static CaptureResult capture_with(const RunSetup& setup, Source source, Stop& stop) {
    return capture::run_capture<kLayout, kFiltered>(source, Clock{}, stop, setup.buffer, setup.options);
  }

  template <bool kFiltered, typename Source>
  static CaptureResult capture_layout(const RunSetup& setup, Source source, Stop& stop) {
    // A test source built for one layout (open_probe() refuses the others).
    if constexpr (requires { Source::kOnlyLayout; })
      return capture_with<Source::kOnlyLayout, kFiltered>(setup, source, stop);
    switch (setup.config.layout) {
      case format::Layout::Double2x4:
        return capture_with<format::Layout::Double2x4, kFiltered>(setup, source, stop);
      case format::Layout::Single8x1:
        return capture_with<format::Layout::Single8x1, kFiltered>(setup, source, stop);
      case format::Layout::Quad4x2:
        return capture_with<format::Layout::Quad4x2, kFiltered>(setup, source, stop);
      case format::Layout::Byte1x8:
        return capture_with<format::Layout::Byte1x8, kFiltered>(setup, source, stop);
    }
    panic("unknown layout");
  }

  static CaptureResult capture_configured(const RunSetup& setup, auto source, Stop& stop) {
    // The UART's lines are D0..D3 (its pulse markers ride in D4..D7): always the filtered loop.
    if constexpr (requires { source.pending; })
      return capture_layout<true>(setup, source, stop);
    else
      return setup.config.filter_mask == 0xFF ? capture_layout<false>(setup, source, stop)
                                              : capture_layout<true>(setup, source, stop);
  }

  template <typename Source>
  static capture::PollWindow floor_window(const RunSetup& setup, Source source) {
    return capture::bare_poll_window(source, x86::TscClock{}, setup.limit_ticks,
                                     1u << Stop::kPollIntervalLog2);
  }

  // bench=N: the production loop (same Stop type, so the same instantiation) with a deadline of one window
  // and a control block nobody writes to, then the floor for a window of the same length.
  template <typename Source>
  static uint32_t bench(const RunSetup& setup, Source source, BenchWindow* windows, uint32_t count) {
    x86::TscClock deadline_clock;
    drivers::IvshmemHost nobody{&g_no_host_control};
    Stop stop(deadline_clock, nobody, setup.limit_ticks, nullptr);
    // The stall log starts unseeded, so that its typical interval is the loop's own fastest round in the
    // window (seeded, it would be the bare polls' shorter one). A window is marked stalled by the capture's
    // rule against the bare 1024 polls timed here, whichever side it is.
    const uint64_t typical = typical_check_ticks<Clock>(source, 1u << Stop::kPollIntervalLog2);
    stop.set_stall_reference(0, setup.stall_floor_ticks);
    const auto stalled = [&](uint64_t longest, uint64_t fastest) {
      const uint64_t shortest = typical != 0 && typical < fastest ? typical : fastest;
      return longest > shortest * capture::StallLog::kStallFactor && longest > setup.stall_floor_ticks;
    };
    uint32_t done = 0;
    for (; done < count; ++done) {
      // The pair's order alternates, so that neither side is always the one a host preemption lands in.
      capture::PollWindow floor{};
      if (done % 2 == 1) floor = floor_window(setup, source);
      const CaptureResult loop = capture_configured(setup, source, stop);
      if (loop.event_count != 0 || loop.iterations == 0) break;  // the lines changed: not an idle window
      if (done % 2 == 0) floor = floor_window(setup, source);
      if (floor.polls == 0) break;
      const capture::StallLog& log = stop.stalls();
      windows[done] = BenchWindow{loop.iterations,
                                  loop.end_tsc - loop.armed_tsc,
                                  log.typical_interval(),
                                  floor.polls,
                                  floor.ticks,
                                  floor.shortest_round,
                                  stalled(log.longest_interval(), log.typical_interval()),
                                  stalled(floor.longest_round, floor.shortest_round)};
    }
    return done;
  }

  template <typename Source>
  static EngineResult run(const RunSetup& setup, Source source, const x86::CpuInfo& cpu) {
    x86::TscClock deadline_clock;
    drivers::IvshmemHost host{setup.control};
    Stop stop(deadline_clock, host, setup.limit_ticks, setup.keyboard);
    stop.set_stall_reference(typical_check_ticks<Clock>(source, 1u << Stop::kPollIntervalLog2),
                             setup.stall_floor_ticks);
    EngineResult result{};
    switch (setup.config.mode) {
      case format::CaptureMode::Calibrate: {
        constexpr uint32_t kFloorPolls = 1u << 20;
        const uint64_t ticks = capture::bare_poll_ticks(source, Clock{}, kFloorPolls);
        result.floor_milliticks = static_cast<uint32_t>(ticks * 1000 / kFloorPolls);
        result.capture = capture::run_calibrate(source, Clock{}, stop, setup.buffer);
        break;
      }
      case format::CaptureMode::HwLat: {
        // A listed model may still fault (a hypervisor that does not pass the MSR through): then no count.
        const auto smi_before = cpu.has_smi_count ? x86::read_msr_safe(x86::kMsrSmiCount)
                                                  : Result<uint64_t>(fail("no MSR_SMI_COUNT"));
        result.capture = capture::run_hwlat(x86::TscClock{}, stop, setup.buffer, setup.hwlat_threshold_ticks);
        if (smi_before) {
          const auto smi_after = x86::read_msr_safe(x86::kMsrSmiCount);
          result.smi_valid = static_cast<bool>(smi_after);
          if (smi_after) result.smi_count = static_cast<uint32_t>(*smi_after - *smi_before);
        }
        break;
      }
      case format::CaptureMode::Capture:
        result.capture = capture_configured(setup, source, stop);
        break;
      case format::CaptureMode::Survey:  // the survey runs no capture through the engine
        break;
    }
    stop.stalls().finish(result.capture.end_tsc);
    result.stalls = stop.stalls();
    return result;
  }
};

bool is_uart(format::ProbeSource source) {
  return source == format::ProbeSource::Uart || source == format::ProbeSource::UartLoopback ||
         source == format::ProbeSource::PciUart;
}

// The UART's registers for setup: the CPU's ports, or a memory-mapped card's BAR.
struct UartAccess {
  x86::CpuIoPorts cpu;
  drivers::PhysicalMemoryBus memory;
  drivers::MemoryUartPorts mapped;
  explicit UartAccess(const Probe& probe) : mapped(memory, probe.uart_memory, probe.uart_shift) {}
  lib::IoPorts& ports(const Probe& probe) {
    if (probe.uart_memory) return mapped;
    return cpu;
  }
};

template <typename Clock>
EngineResult run_with_clock(const RunSetup& setup, const Probe& probe, const x86::CpuInfo& cpu) {
  if (probe.uart_open) {
    const uint16_t mcr = static_cast<uint16_t>(probe.uart.base + drivers::UartProbe::kMcr);
    EngineResult result = probe.uart_memory ? Loops<Clock>::run(setup, uart_memory_lines(probe), cpu)
                          : setup.config.uart_selftest
                              ? Loops<Clock>::run(setup, drivers::UartSelfTestLines(probe.io_base, mcr), cpu)
                              : Loops<Clock>::run(setup, drivers::UartLines{probe.io_base}, cpu);
    drivers::UartProbe::mark_short_pulses(const_cast<format::EventRecord*>(setup.buffer.begin()),
                                          result.capture.event_count, setup.config.layout);
    return result;
  }
  if (probe.source == format::ProbeSource::Ivshmem)
    return Loops<Clock>::run(setup, drivers::IvshmemLines{probe.ivshmem_lines}, cpu);
  return Loops<Clock>::run(setup, drivers::PortLines{probe.io_base}, cpu);
}

template <typename Clock>
uint32_t bench_with_clock(const RunSetup& setup, const Probe& probe, BenchWindow* windows, uint32_t count) {
  if (probe.uart_open && probe.uart_memory)
    return Loops<Clock>::bench(setup, uart_memory_lines(probe), windows, count);
  if (probe.uart_open) return Loops<Clock>::bench(setup, drivers::UartLines{probe.io_base}, windows, count);
  if (probe.source == format::ProbeSource::Ivshmem)
    return Loops<Clock>::bench(setup, drivers::IvshmemLines{probe.ivshmem_lines}, windows, count);
  return Loops<Clock>::bench(setup, drivers::PortLines{probe.io_base}, windows, count);
}

capture::CaptureOptions options_for(const config::Config& config) {
  capture::CaptureOptions options;
  options.filter_mask = config.filter_mask;
  if (is_uart(config.probe)) options.filter_mask &= drivers::UartMsr::kLineMask;
  options.trigger_enabled = config.trigger_enabled;
  options.trigger = capture::TritPattern{config.trigger_mask, config.trigger_match};
  options.pretrigger = config.pretrigger;
  if (config.stop_rule == format::StopReason::ZeroCode) options.event_stop = capture::EventStop::zero_code();
  if (config.stop_rule == format::StopReason::CodeMatch)
    options.event_stop = capture::EventStop::code_on_probe(config.stop_probe, config.stop_code);
  return options;
}

uint64_t stall_floor_ticks(uint64_t tsc_hz) {
  return tsc_hz * capture::StallLog::kStallFloorNs / 1'000'000'000;
}

// The lpt sources: the port's registers (on-board at the I/O base, or a PCI card's BARs), opened for input.
Result<ParallelPort> open_port(const config::Config& config, Probe& probe) {
  const bool loopback = config.probe == format::ProbeSource::LptLoopback;
  ParallelPort::Location where{};
  if (config.probe == format::ProbeSource::PciLpt) {
    ETT_TRY_ASSIGN(const drivers::PciLpt card, drivers::PciLpt::find());
    const drivers::PciLpt::Registers& r = card.registers;
    probe.pci = card.pci;
    where = {r.spp_base, r.ecr_port};
    char ecr[48] = "no second I/O BAR, so no ECR";
    if (card.card) lib::format(ecr, sizeof(ecr), "no ECR BAR");
    if (r.ecr_port) lib::format(ecr, sizeof(ecr), "ECR at I/O 0x%04x (BAR%u + 2)", r.ecr_port, r.ecr_bar);
    char kind[64];
    if (card.card)
      lib::format(kind, sizeof(kind), "%s, class %02x/%02x, from the card list", card.card->name,
                  card.class_code, card.subclass);
    else
      lib::format(kind, sizeof(kind), "prog-if %02x: %s", card.prog_if,
                  drivers::PciLpt::interface_name(card.prog_if));
    console::print(
        "ETT: probe pci-lpt: card %04x:%04x at PCI %02x:%02x.%x (%s), SPP registers at I/O 0x%04x "
        "(BAR%u), %s\n",
        card.vendor, card.device, card.pci.bus, card.pci.slot, card.pci.function, kind, r.spp_base, r.spp_bar,
        ecr);
  } else {
    where = ParallelPort::Location::on_board(config.probe_io_base ? config.probe_io_base
                                                                  : ParallelPort::kDefaultBase);
  }
  x86::CpuIoPorts io;
  return ParallelPort::open(io, where, loopback ? ParallelPort::Mode::Loopback : ParallelPort::Mode::Input);
}

// The direction check's reads, for the console: what a user compares with the wiring.
void format_check(char* out, size_t size, const ParallelPort::Check& check) {
  lib::format(out, size,
              "wrote 0x%02x/0x%02x, read 0x%02x/0x%02x with the direction bit clear, 0x%02x/0x%02x set",
              ParallelPort::kPatternA, ParallelPort::kPatternB, check.clear_a, check.clear_b, check.set_a,
              check.set_b);
}

void report_port(const config::Config& config, const Probe& probe, const ParallelPort& port) {
  const ParallelPort::Saved& saved = port.saved();
  char ecr[112] = "";
  if (saved.has_ecr)
    lib::format(ecr, sizeof(ecr), "ECR at 0x%03x switched from %s to PS/2 mode (reads 0x%02x)",
                saved.where.ecr_port, ParallelPort::ecr_mode_name(port.firmware_ecr_mode()),
                port.check().ecr);
  else if (saved.where.ecr_port)
    lib::format(ecr, sizeof(ecr), "no ECR at 0x%03x", saved.where.ecr_port);
  else
    lib::format(ecr, sizeof(ecr), "no ECR");
  // Two lines: one console line holds 256 characters.
  console::print("ETT: probe %s at I/O 0x%03x: %s (control was 0x%02x)%s\n",
                 format::probe_source_name(static_cast<uint32_t>(config.probe)), port.base(), ecr,
                 saved.control, probe.control ? "; host stop through the ivshmem control block" : "");
  if (config.probe == format::ProbeSource::LptLoopback) {
    console::print(
        "ETT: probe %s at I/O 0x%03x: direction bit clear: TEST-ONLY loopback, the data register "
        "reads back what was written to it\n",
        format::probe_source_name(static_cast<uint32_t>(config.probe)), port.base());
    return;
  }
  char check[112];
  format_check(check, sizeof(check), port.check());
  console::print("ETT: probe %s at I/O 0x%03x: input (control bit 5 set), checked: %s\n",
                 format::probe_source_name(static_cast<uint32_t>(config.probe)), port.base(), check);
}

drivers::UartProbe::Mode uart_mode(const config::Config& config) {
  return config.probe == format::ProbeSource::UartLoopback ? drivers::UartProbe::Mode::Loopback
                                                           : drivers::UartProbe::Mode::Input;
}

// probe=pci-uart: the card's port 0, I/O or memory-mapped; `where` gets how the console names it.
Result<uint16_t> find_pci_uart(const config::Config& config, Probe& probe, char* where, size_t size) {
  const x86::pci::Address wanted{config.probe_pci_bus, config.probe_pci_slot, config.probe_pci_function};
  ETT_TRY_ASSIGN(const drivers::PciUart card,
                 drivers::PciUart::find(config.probe_pci_given ? &wanted : nullptr));
  const drivers::PciUart::Registers& r = card.registers;
  probe.pci = card.pci;
  if (r.is_io) {
    lib::format(where, size, "I/O 0x%04x", static_cast<unsigned>(r.base));
  } else {
    lib::format(where, size, "memory 0x%08llx", static_cast<unsigned long long>(r.base));
    probe.uart_memory = r.base;
    probe.uart_shift = r.shift;
  }
  console::print(
      "ETT: probe pci-uart: card %04x:%04x at PCI %02x:%02x.%x (%s), port 0 at %s (BAR%u + 0x%llx)\n",
      card.id.vendor, card.id.device, card.pci.bus, card.pci.slot, card.pci.function,
      card.card ? card.card->name : "class 07/00, generic 16550", where, r.bar,
      static_cast<unsigned long long>(r.offset));
  return static_cast<uint16_t>(r.is_io ? r.base : 0);
}

// The uart sources: an on-board UART's or a PCI card's modem-status register (never the serial console's
// port).
Status open_uart(const config::Config& config, Probe& probe) {
  using drivers::UartMsr;
  using drivers::UartProbe;
  char where[48];
  uint16_t base = config.probe_io_base ? config.probe_io_base : UartProbe::kDefaultBase;
  if (config.probe == format::ProbeSource::PciUart) {
    ETT_TRY_ASSIGN(base, find_pci_uart(config, probe, where, sizeof(where)));
  } else {
    lib::format(where, sizeof(where), "I/O 0x%03x", base);
  }
  UartAccess access(probe);
  ETT_TRY_ASSIGN(const UartProbe uart, UartProbe::open(access.ports(probe), base, drivers::SerialPort::kCom1,
                                                       uart_mode(config), where));
  probe.uart_open = true;
  probe.uart = uart.saved();
  probe.io_base = uart.msr_port();
  probe.address = probe.uart_memory ? static_cast<uint32_t>(probe.uart_memory) : uart.base();
  const uint8_t msr = uart.armed_msr();
  const char* name = format::probe_source_name(static_cast<uint32_t>(config.probe));
  console::print("ETT: probe %s at %s: %s, loopback test passed (MCR was 0x%02x, IER 0x%02x)%s\n", name,
                 where, UartProbe::kind_name(uart.kind()), uart.saved().mcr, uart.saved().ier,
                 probe.control ? "; host stop through the ivshmem control block" : "");
  console::print("ETT: probe %s at %s: %s; lines D0-D3 = DCD %u, DSR %u, CTS %u, RI %u (MSR 0x%02x)\n", name,
                 where,
                 config.probe == format::ProbeSource::UartLoopback
                     ? "TEST-ONLY loopback (MCR bit 4), its own outputs drive the inputs"
                     : "input, interrupts off",
                 (msr & UartMsr::kDcd) ? 1 : 0, (msr & UartMsr::kDsr) ? 1 : 0, (msr & UartMsr::kCts) ? 1 : 0,
                 (msr & UartMsr::kRi) ? 1 : 0, msr);
  return {};
}

}  // namespace

drivers::UartMemoryLines uart_memory_lines(const Probe& probe) {
  return {{drivers::PhysicalMemoryBus::pointer(probe.uart_memory +
                                               (uint64_t{drivers::UartProbe::kMsr} << probe.uart_shift))}};
}

Result<Probe> open_probe(const config::Config& config) {
  if (config.uart_selftest && (config.probe != format::ProbeSource::UartLoopback ||
                               config.layout != drivers::UartSelfTestLines::kOnlyLayout))
    return fail(
        "uart-selftest=1 is a test of probe=uart-loopback with layout=2x4: it writes the UART's MCR itself");
  Probe probe{};
  probe.source = config.probe;
  probe.control = nullptr;
  auto ivshmem = drivers::IvshmemProbe::find();
  if (ivshmem) {
    probe.control = ivshmem->control();
    probe.ivshmem_lines = ivshmem->lines();
    probe.pci = ivshmem->pci_address();
  }
  // mode=hwlat reads only the clock: no probe is needed, none is touched.
  if (config.mode == format::CaptureMode::HwLat) {
    console::print("ETT: mode=hwlat reads no probe%s\n",
                   probe.control ? "; host stop through the ivshmem control block" : "");
    return probe;
  }
  if (config.probe == format::ProbeSource::Ivshmem) {
    if (!ivshmem) return ivshmem.failure();
    probe.address = ivshmem->physical_address();
    console::print("ETT: probe ivshmem at PCI %02x:%02x.%x, shared memory at 0x%08x (%llu KiB)\n",
                   probe.pci.bus, probe.pci.slot, probe.pci.function, probe.address, ivshmem->size() / 1024);
    return probe;
  }
  if (is_uart(config.probe)) {
    ETT_TRY(open_uart(config, probe));
    return probe;
  }
  ETT_TRY_ASSIGN(const ParallelPort port, open_port(config, probe));
  probe.lpt_open = true;
  probe.lpt = port.saved();
  probe.io_base = port.data_port();
  probe.address = port.base();
  report_port(config, probe, port);
  return probe;
}

Status arm_probe(const config::Config& config, const Probe& probe) {
  if (probe.uart_open) {
    UartAccess access(probe);
    drivers::UartProbe::arm(access.ports(probe), probe.uart, uart_mode(config));
    return {};
  }
  if (!probe.lpt_open) return {};
  x86::CpuIoPorts io;
  const bool loopback = config.probe == format::ProbeSource::LptLoopback;
  ETT_TRY_ASSIGN(
      const ParallelPort::Check check,
      ParallelPort::arm(io, probe.lpt, loopback ? ParallelPort::Mode::Loopback : ParallelPort::Mode::Input));
  if (loopback) return {};
  char text[112];
  format_check(text, sizeof(text), check);
  console::print("ETT: probe %s at I/O 0x%03x: input, checked before the capture: %s\n",
                 format::probe_source_name(static_cast<uint32_t>(config.probe)), probe.lpt.where.base, text);
  return {};
}

void close_probe(const Probe& probe) {
  x86::CpuIoPorts io;
  if (probe.uart_open) {
    UartAccess access(probe);
    drivers::UartProbe::restore(access.ports(probe), probe.uart);
  }
  if (!probe.lpt_open) return;
  ParallelPort::restore(io, probe.lpt);
}

EngineResult run_engine(const config::Config& config, const Probe& probe, const x86::CpuInfo& cpu,
                        uint64_t tsc_hz, volatile vprobe::Control* control, capture::EventBuffer buffer,
                        uint8_t held_key) {
  const capture::CaptureOptions options = options_for(config);
  const uint32_t threshold_ns =
      config.hwlat_threshold_ns ? config.hwlat_threshold_ns : config::kDefaultHwlatThresholdNs;
  drivers::Ps2StopKey keyboard{drivers::StopKeyFilter(held_key)};
  if (config.keyboard) keyboard.drain();
  const RunSetup setup{config,
                       options,
                       config.limit_ms ? lib::ticks_for_ms(config.limit_ms, tsc_hz) : 0,
                       tsc_hz * threshold_ns / 1'000'000'000,
                       stall_floor_ticks(tsc_hz),
                       control ? control : &g_no_host_control,
                       buffer,
                       config.keyboard ? &keyboard : nullptr};
  x86::cli();
  return cpu.has_sse2 ? run_with_clock<x86::OrderedTscClock>(setup, probe, cpu)
                      : run_with_clock<x86::TscClock>(setup, probe, cpu);
}

uint32_t run_bench(const config::Config& config, const Probe& probe, const x86::CpuInfo& cpu, uint64_t tsc_hz,
                   BenchWindow* windows, uint32_t count, capture::EventBuffer buffer) {
  capture::CaptureOptions options = options_for(config);
  options.trigger_enabled =
      false;  // the trigger wait is a loop of its own; the benchmark times the capture loop
  const RunSetup setup{config,
                       options,
                       lib::ticks_for_ms(kBenchWindowMs, tsc_hz),
                       0,
                       stall_floor_ticks(tsc_hz),
                       &g_no_host_control,
                       buffer};
  x86::cli();
  return cpu.has_sse2 ? bench_with_clock<x86::OrderedTscClock>(setup, probe, windows, count)
                      : bench_with_clock<x86::TscClock>(setup, probe, windows, count);
}

void describe(const config::Config& config, const Probe& probe, const EngineResult& result,
              format::SessionHeader& header) {
  const CaptureResult& r = result.capture;
  header.probe_address = probe.address;
  header.filter_mask = config.filter_mask;
  header.trigger_mask = config.trigger_mask;
  header.trigger_match = config.trigger_match;
  header.pretrigger = config.pretrigger;
  header.stop_probe = config.stop_probe;
  header.stop_code = config.stop_code;
  header.hwlat_threshold_ns =
      config.mode == format::CaptureMode::HwLat
          ? (config.hwlat_threshold_ns ? config.hwlat_threshold_ns : config::kDefaultHwlatThresholdNs)
          : 0;
  header.armed_tsc = r.armed_tsc;
  header.pretrigger_events = r.pretrigger_events;
  header.loop_iterations = r.iterations;
  header.floor_milliticks = result.floor_milliticks;
  const capture::StallLog& stalls = result.stalls;
  header.stall_count = stalls.count();
  header.longest_check_ticks = stalls.longest_interval();
  header.typical_check_ticks = stalls.typical_interval();
  header.stall_threshold_ticks = stalls.typical_interval() != 0 ? stalls.threshold() : 0;
  header.longest_stall_ticks = stalls.longest_stall();
  header.smi_count = result.smi_count;
  if (r.triggered) header.flags |= format::kFlagTriggered;
  if (result.smi_valid) header.flags |= format::kFlagSmiCount;
}

}  // namespace ett::engine
