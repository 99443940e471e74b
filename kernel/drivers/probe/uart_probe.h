// uart_probe.h: a 16550-compatible UART (on-board COM port) opened as the capture's probe: the four inputs of
// its modem-status register (MSR), DCD, DSR, CTS and RI, are the lines D0..D3.
//
// The MSR holds the inputs in bits 7:4 and, in bits 3:0, the delta bits DCTS, DDSR, TERI and DDCD, which the
// UART sets on a change of its input (TERI: on RI's trailing edge only) and clears when the MSR is read. So
// one `in` of the MSR per poll gives the inputs and, with the same read, whether an input changed since the
// previous poll even when it reads the same again: a pulse shorter than the poll step still shows. The
// capture loop's source (uart_lines.h) records such a pulse as two edges with format::kEventShortPulse.
//
// Two modes:
//  - Input: the real probe. Interrupts off (IER 0), loopback off; DTR, RTS, OUT1 and OUT2 stay as found (a
//    circuit may be powered from DTR/RTS).
//  - Loopback (probe=uart-loopback, tests only): MCR bit 4 set, so the UART connects its own outputs to its
//    inputs (DTR -> DSR, RTS -> CTS, OUT1 -> RI, OUT2 -> DCD); under QEMU the monitor command
//    `o/b BASE+4 VALUE` (VALUE with bit 4 set) drives them.
// open() refuses the kernel's serial console's port by name, and a base where no UART answers (the interrupt
// enable register does not hold what is written, e.g. a floating bus reading 0xff) or whose loopback test
// fails. It names the UART's kind: 8250, 16450, 16550 (FIFO unusable), 16550A, 16C950 (Oxford, its ID
// registers read through ICR). restore() puts IER, MCR, LCR and the FIFO enable back as open() found them.
// Written against lib::IoPorts, so that the host tests run this source against register models.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "ett/trace_format.h"
#include "lib/io_ports.h"

namespace ett::drivers {

// The MSR's bits and the line order of the UART probe: D0 = DCD, D1 = DSR, D2 = CTS, D3 = RI.
struct UartMsr {
  enum Bit : uint8_t {
    kDeltaCts = 1u << 0,
    kDeltaDsr = 1u << 1,
    kTrailingEdgeRi = 1u << 2,
    kDeltaDcd = 1u << 3,
    kCts = 1u << 4,
    kDsr = 1u << 5,
    kRi = 1u << 6,
    kDcd = 1u << 7,
  };
  enum Line : uint8_t { kLineDcd = 1u << 0, kLineDsr = 1u << 1, kLineCts = 1u << 2, kLineRi = 1u << 3 };
  static constexpr uint8_t kLineMask = 0x0F;

  // The MSR's inputs (bits 7:4: CTS, DSR, RI, DCD) and its delta bits (bits 3:0: DCTS, DDSR, TERI, DDCD)
  // are in the same order: one table turns either nibble into lines D0..D3, another lines into inputs.
  // Tables, not bit tests: the decode is inlined into every capture-loop instantiation (hot_loop_check.sh
  // limits their size).
  static constexpr uint8_t kNibbleLines[16] = {0x0, 0x4, 0x2, 0x6, 0x8, 0xC, 0xA, 0xE,
                                               0x1, 0x5, 0x3, 0x7, 0x9, 0xD, 0xB, 0xF};
  static constexpr uint8_t kLinesNibble[16] = {0x0, 0x8, 0x2, 0xA, 0x1, 0x9, 0x3, 0xB,
                                               0x4, 0xC, 0x6, 0xE, 0x5, 0xD, 0x7, 0xF};
  // The inputs as lines D0..D3.
  static constexpr uint8_t lines(uint32_t msr) { return kNibbleLines[(msr >> 4) & 0xF]; }
  // The lines whose delta bit is set.
  static constexpr uint8_t delta_lines(uint32_t msr) { return kNibbleLines[msr & 0xF]; }
  // The MSR that reads `lines` with no delta bit set.
  static constexpr uint8_t status(uint32_t lines) {
    return static_cast<uint8_t>(kLinesNibble[lines & kLineMask] << 4);
  }
  // The MSR bits (input and delta) of `lines`: what the idle step compares under filter=.
  static constexpr uint8_t watched(uint32_t lines) {
    const uint8_t s = status(lines);
    return static_cast<uint8_t>(s | s >> 4);  // each delta bit is its input's bit 4 places down
  }
  // The lines that latched a change but read as before (`last`): a pulse shorter than one poll step.
  static constexpr uint8_t short_pulses(uint32_t msr, uint32_t last) {
    return static_cast<uint8_t>(delta_lines(msr) & ~(lines(msr) ^ last));  // delta_lines: D0..D3 only
  }
  // What the capture loop gets from an MSR read that left the idle step (`last`: the lines before, `mask`:
  // the lines filter= watches): the lines as read, or for short pulses first the lines with the pulsed ones
  // toggled, then (second, 0 when there is none) the lines as read; both with the pulsed lines in bits 7:4
  // (kPulseMarkerShift). Branch-free: it is inlined into every capture-loop instantiation.
  static constexpr uint8_t kPulseMarkerShift = 4;
  struct Change {
    uint8_t first;
    uint8_t second;
  };
  static constexpr Change change(uint32_t msr, uint32_t last, uint32_t mask) {
    const uint8_t now = lines(msr);
    const uint8_t pulses = static_cast<uint8_t>(short_pulses(msr, last) & mask);
    const uint8_t marker = static_cast<uint8_t>(pulses << kPulseMarkerShift);
    return {static_cast<uint8_t>((now ^ pulses) | marker), static_cast<uint8_t>(marker ? now | marker : 0)};
  }
};
static_assert(UartMsr::watched(UartMsr::kLineDcd) == (UartMsr::kDcd | UartMsr::kDeltaDcd));
static_assert(UartMsr::watched(UartMsr::kLineRi) == (UartMsr::kRi | UartMsr::kTrailingEdgeRi));
static_assert(UartMsr::watched(UartMsr::kLineCts) == (UartMsr::kCts | UartMsr::kDeltaCts));
static_assert(UartMsr::watched(UartMsr::kLineDsr) == (UartMsr::kDsr | UartMsr::kDeltaDsr));
static_assert(UartMsr::lines(UartMsr::kDcd) == UartMsr::kLineDcd &&
              UartMsr::lines(UartMsr::kDsr) == UartMsr::kLineDsr &&
              UartMsr::lines(UartMsr::kCts) == UartMsr::kLineCts &&
              UartMsr::lines(UartMsr::kRi) == UartMsr::kLineRi);
static_assert(UartMsr::delta_lines(UartMsr::kDeltaDcd) == UartMsr::kLineDcd &&
              UartMsr::delta_lines(UartMsr::kTrailingEdgeRi) == UartMsr::kLineRi);
static_assert(UartMsr::status(UartMsr::kLineDcd | UartMsr::kLineCts) == (UartMsr::kDcd | UartMsr::kCts));

class UartProbe {
 public:
  enum class Mode : uint8_t { Input, Loopback };
  enum class Kind : uint8_t { Uart8250, Uart16450, Uart16550, Uart16550A, Uart16C950 };
  // COM2: COM1 (0x3f8) is the kernel's serial console.
  static constexpr uint16_t kDefaultBase = 0x2F8;

  struct Saved {
    uint16_t base;
    uint8_t lcr;
    uint8_t ier;
    uint8_t mcr;
    bool fifo_on;  // IIR bits 7:6 showed FIFOs enabled
  };

  // Checks and opens the UART at `base` (see the top of this file); `console_base` is the serial console's
  // port (0: none), which is refused. `where` names the UART in refusals (nullptr: "I/O 0xBASE"); a
  // memory-mapped UART (drivers/probe/pci_uart.h's MemoryUartPorts) is opened at base 0 with its address.
  static Result<UartProbe> open(lib::IoPorts& io, uint16_t base, uint16_t console_base, Mode mode,
                                const char* where = nullptr);
  // Switches the UART opened as `saved` to `mode` again (before every capture) and reads the MSR once, which
  // clears its delta bits; returns that read.
  static uint8_t arm(lib::IoPorts& io, const Saved& saved, Mode mode);
  static void restore(lib::IoPorts& io, const Saved& saved);

  static const char* kind_name(Kind kind);
  // After a capture: every record whose probe's lines carry a pulse marker (UartMsr::change) gets
  // format::kEventShortPulse; the markers are cleared from lines and code. Records of probe 0 (calibrate,
  // hwlat) are left alone.
  static void mark_short_pulses(format::EventRecord* records, uint64_t count, format::Layout layout);
  const Saved& saved() const { return m_saved; }
  Kind kind() const { return m_kind; }
  uint16_t base() const { return m_saved.base; }
  uint16_t msr_port() const { return static_cast<uint16_t>(m_saved.base + kMsr); }
  uint8_t armed_msr() const { return m_armed_msr; }

  enum Reg : uint8_t {
    kData = 0,
    kIer = 1,
    kIir = 2,  // read; FCR on write; EFR when LCR = 0xBF (16650 and later)
    kLcr = 3,
    kMcr = 4,
    kLsr = 5,  // read; ICR on write (16C950, indexed by SPR)
    kMsr = 6,
    kScr = 7,  // scratch; SPR (the ICR index) on the 16C950
  };
  enum McrBit : uint8_t {
    kDtr = 1u << 0,
    kRts = 1u << 1,
    kOut1 = 1u << 2,
    kOut2 = 1u << 3,
    kLoop = 1u << 4,
  };
  static constexpr uint8_t kLcrDlab = 0x80;
  static constexpr uint8_t kLcrConfigB = 0xBF;  // the enhanced registers (EFR) of the 16650 and later
  static constexpr uint8_t kFcrEnable = 0x01;
  static constexpr uint8_t kIirFifoBits = 0xC0;
  static constexpr uint8_t kEfrEnhanced = 0x10;  // ECB: the 16C950's ICR/ACR access
  static constexpr uint8_t kIcrAcr = 0x00, kIcrId1 = 0x08, kIcrId2 = 0x09, kIcrId3 = 0x0A;
  static constexpr uint8_t kAcrIcrRead = 0x40;

 private:
  UartProbe(const Saved& saved, Kind kind) : m_saved(saved), m_kind(kind) {}
  static Kind identify(lib::IoPorts& io, const Saved& saved);

  Saved m_saved;
  Kind m_kind;
  uint8_t m_armed_msr = 0;
};

}  // namespace ett::drivers
