// probe_engine.h: the capture engine's hardware side: opens the probe= source and runs the chosen loop
// (capture with trigger/filter/stop rules, calibrate, hwlat) with interrupts off; switches an lpt port to
// input and checks it before every capture, and restores it only when the kernel leaves it for good.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu_info.h"
#include "arch/x86/pci.h"
#include "capture/capture_loop.h"
#include "capture/stall_log.h"
#include "config/cmdline.h"
#include "drivers/probe/parallel_port.h"
#include "drivers/probe/uart_lines.h"
#include "drivers/probe/uart_probe.h"
#include "ett/result.h"
#include "ett/trace_format.h"
#include "ett/virtual_probe.h"

namespace ett::engine {

struct Probe {
  format::ProbeSource source;
  uint32_t address;                   // header.probe_address: shared memory, or the port's I/O base
  volatile uint8_t* ivshmem_lines;    // probe=ivshmem
  volatile vprobe::Control* control;  // the virtual probe's control block when one exists (host stop)
  uint16_t io_base;                   // lpt sources: the data register the loop reads
  bool lpt_open;                      // an lpt source was opened: arm_probe() and close_probe() apply
  drivers::ParallelPort::Saved lpt;   // the port's registers as the kernel found them
  x86::pci::Address pci;              // ivshmem or pci-lpt
  bool uart_open;                     // a uart source was opened: arm_probe() and close_probe() apply
  drivers::UartProbe::Saved uart;     // the UART's registers as the kernel found them
  uint64_t uart_memory;               // pci-uart with a memory BAR: register 0's address (0: I/O ports)
  uint8_t uart_shift;                 // and the register shift
};

// Finds and opens the source; with an lpt source the ivshmem device, when present, still carries the host's
// stop request and the state handshake. mode=hwlat opens no source (it reads only the clock).
Result<Probe> open_probe(const config::Config& config);
// Before every capture: switches an lpt source to input (lpt-loopback: direction bit clear) again and checks
// it, printing what the check read (the port may have been changed since the last capture); no-op for
// ivshmem and mode=hwlat. A refused port is left with the direction bit set.
Status arm_probe(const config::Config& config, const Probe& probe);
// Puts the parallel port's registers back as open_probe() found them, which makes an SPP-mode port drive its
// latch again: only when the kernel leaves the port for good (no-op for ivshmem and mode=hwlat).
void close_probe(const Probe& probe);

// A memory-mapped UART's modem-status register (probe=pci-uart on a card with a memory BAR) as lines.
drivers::UartMemoryLines uart_memory_lines(const Probe& probe);

// bench=N: one window pair of the loop benchmark: polls and TSC ticks of each window, and the ticks of each
// window's fastest round of 1024 polls (the loop: check to check, its stop check included; the floor: TSC
// read to TSC read). Host noise only lengthens a round, so the fastest rounds are the undisturbed cost.
struct BenchWindow {
  uint64_t loop_polls;  // the capture loop as configured, idle, its stop checks included
  uint64_t loop_ticks;
  uint64_t loop_fastest_round;
  uint64_t floor_polls;  // the idle step alone, a TSC read every 1024 polls to end the window
  uint64_t floor_ticks;
  uint64_t floor_fastest_round;
  bool loop_stalled;  // the window held a stall (the stall log's rule): its ticks measure the host, too
  bool floor_stalled;
};

struct EngineResult {
  capture::CaptureResult capture;
  capture::StallLog stalls;   // the capture's check intervals and stalls (mode=capture and calibrate)
  uint32_t floor_milliticks;  // mode=calibrate: the bare poll loop, ticks per poll x 1000
  uint32_t smi_count;         // mode=hwlat with cpu.has_smi_count
  bool smi_valid;
};

// bench=N: the capture loop as configured (idle, stop checks included) against the bare poll floor (the same
// idle step, with only a TSC read every 1024 polls to end its window), in N interleaved window pairs of
// kBenchWindowMs each. Same boot, source and instructions, so loop ticks per poll can only be >= the floor's.
// Returns the pairs done (fewer when the lines changed). Disables interrupts; leaves them off.
inline constexpr uint32_t kBenchWindowMs = 1;
uint32_t run_bench(const config::Config& config, const Probe& probe, const x86::CpuInfo& cpu, uint64_t tsc_hz,
                   BenchWindow* windows, uint32_t count, capture::EventBuffer buffer);

// Runs the loop the configuration asks for into `buffer`. Disables interrupts; leaves them off. held_key:
// the make code of the key that started the capture (Enter on the start screen), 0 without a start screen:
// with keyboard=1 its release and repeats do not stop the capture.
EngineResult run_engine(const config::Config& config, const Probe& probe, const x86::CpuInfo& cpu,
                        uint64_t tsc_hz, volatile vprobe::Control* control, capture::EventBuffer buffer,
                        uint8_t held_key);

// Fills the issue-3 fields of the session header from the configuration and the result.
void describe(const config::Config& config, const Probe& probe, const EngineResult& result,
              format::SessionHeader& header);

}  // namespace ett::engine
