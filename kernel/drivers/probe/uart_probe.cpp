// uart_probe.cpp: checking a UART (it answers, its loopback works, its kind), switching it to the probe's
// mode before every capture, and restoring it when the kernel leaves it for good.
#include "drivers/probe/uart_probe.h"

#include "ett/probe_layout.h"
#include "lib/format.h"

namespace ett::drivers {

namespace {
char g_message[240];  // the refusal messages (Error holds a static string); fits one console line

// The loopback test: an MCR value (loop bit set) and the inputs it must give.
struct LoopStep {
  uint8_t mcr;
  uint8_t msr_inputs;
};
constexpr LoopStep kLoopSteps[] = {
    {UartProbe::kLoop | UartProbe::kRts | UartProbe::kOut2, UartMsr::kCts | UartMsr::kDcd},
    {UartProbe::kLoop | UartProbe::kDtr | UartProbe::kOut1, UartMsr::kDsr | UartMsr::kRi},
    {UartProbe::kLoop, 0},
};
}  // namespace

const char* UartProbe::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Uart8250:
      return "8250 (no scratch register)";
    case Kind::Uart16450:
      return "16450 (no FIFO)";
    case Kind::Uart16550:
      return "16550 (FIFO unusable)";
    case Kind::Uart16550A:
      return "16550A";
    case Kind::Uart16C950:
      return "16C950";
  }
  return "unknown";
}

// As Linux's 8250 autoconfig: the scratch register, then the FIFO bits of IIR after FIFO enable, then the
// 16C950's ID registers (through EFR's enhanced bit, SPR and ICR).
UartProbe::Kind UartProbe::identify(lib::IoPorts& io, const Saved& saved) {
  const lib::PortWindow uart(io, saved.base);
  const uint8_t scratch = uart.in8(kScr);
  uart.out8(kScr, 0xA5);
  const bool has_scratch = uart.in8(kScr) == 0xA5;
  uart.out8(kScr, scratch);
  if (!has_scratch) return Kind::Uart8250;
  uart.out8(kIir, kFcrEnable);
  const uint8_t fifo = uart.in8(kIir) & kIirFifoBits;
  uart.out8(kIir, saved.fifo_on ? kFcrEnable : 0);
  if (fifo == 0) return Kind::Uart16450;
  if (fifo != kIirFifoBits) return Kind::Uart16550;
  Kind kind = Kind::Uart16550A;
  uart.out8(kLcr, kLcrConfigB);
  if (uart.in8(kIir) == 0) {  // EFR reads 0 after reset; a 16550A's IIR never does
    uart.out8(kIir, kEfrEnhanced);
    uart.out8(kLcr, 0);
    const auto icr_read = [&](uint8_t index) {
      uart.out8(kScr, kIcrAcr);
      uart.out8(kLsr, kAcrIcrRead);
      uart.out8(kScr, index);
      const uint8_t value = uart.in8(kLsr);
      uart.out8(kScr, kIcrAcr);
      uart.out8(kLsr, 0);
      return value;
    };
    const uint8_t id1 = icr_read(kIcrId1), id2 = icr_read(kIcrId2), id3 = icr_read(kIcrId3);
    if (id1 == 0x16 && id2 == 0xC9 && (id3 == 0x50 || id3 == 0x52 || id3 == 0x54)) kind = Kind::Uart16C950;
    uart.out8(kScr, scratch);
    uart.out8(kLcr, kLcrConfigB);
    uart.out8(kIir, 0);  // EFR back to 0
  }
  uart.out8(kLcr, static_cast<uint8_t>(saved.lcr & ~kLcrDlab));
  return kind;
}

Result<UartProbe> UartProbe::open(lib::IoPorts& io, uint16_t base, uint16_t console_base, Mode mode,
                                  const char* where) {
  char at[48];
  if (where == nullptr) {
    lib::format(at, sizeof(at), "I/O 0x%03x", base);
    where = at;
  }
  if (console_base != 0 && base == console_base) {
    lib::format(g_message, sizeof(g_message),
                "the UART at I/O 0x%03x is COM1, the kernel's serial console: use another port (probe=uart "
                "takes COM2 at 0x2f8 by default, probe=uart:BASE another)",
                base);
    return fail(g_message);
  }
  const lib::PortWindow uart(io, base);
  Saved saved{base, uart.in8(kLcr), 0, 0, false};
  uart.out8(kLcr, static_cast<uint8_t>(saved.lcr & ~kLcrDlab));  // IER, not the divisor's high byte
  saved.ier = uart.in8(kIer);
  saved.mcr = uart.in8(kMcr);
  saved.fifo_on = (uart.in8(kIir) & kIirFifoBits) != 0;
  // The interrupt enable register holds its low four bits: a floating bus (0xff) or another chip does not.
  uart.out8(kIer, 0);
  const uint8_t ier_zero = uart.in8(kIer) & 0x0F;
  uart.out8(kIer, 0x0F);
  const uint8_t ier_ones = uart.in8(kIer) & 0x0F;
  uart.out8(kIer, 0);
  if (ier_zero != 0 || ier_ones != 0x0F) {
    uart.out8(kIer, saved.ier);
    uart.out8(kLcr, saved.lcr);
    lib::format(g_message, sizeof(g_message),
                "no UART answers at %s (its interrupt enable register read 0x%02x/0x%02x after "
                "0x00/0x0f were written)",
                where, ier_zero, ier_ones);
    return fail(g_message);
  }
  // The MSR path the capture reads: in loopback mode the UART's own outputs drive its inputs.
  for (const LoopStep& step : kLoopSteps) {
    uart.out8(kMcr, step.mcr);
    const uint8_t inputs = uart.in8(kMsr) & 0xF0;
    if (inputs != step.msr_inputs) {
      restore(io, saved);
      lib::format(g_message, sizeof(g_message),
                  "the UART at %s failed its loopback test: with MCR 0x%02x its modem-status inputs "
                  "read 0x%02x, expected 0x%02x",
                  where, step.mcr, inputs, step.msr_inputs);
      return fail(g_message);
    }
  }
  UartProbe opened(saved, identify(io, saved));
  opened.m_armed_msr = arm(io, saved, mode);
  return opened;
}

uint8_t UartProbe::arm(lib::IoPorts& io, const Saved& saved, Mode mode) {
  const lib::PortWindow uart(io, saved.base);
  uart.out8(kLcr, static_cast<uint8_t>(saved.lcr & ~kLcrDlab));
  uart.out8(kIer, 0);
  // Loopback starts with every output off (all inputs 0); Input keeps the outputs as found.
  uart.out8(kMcr, mode == Mode::Loopback ? uint8_t{kLoop}
                                         : static_cast<uint8_t>(saved.mcr & (kDtr | kRts | kOut1 | kOut2)));
  return uart.in8(kMsr);  // clears the delta bits: the capture sees only changes from now on
}

void UartProbe::mark_short_pulses(format::EventRecord* records, uint64_t count, format::Layout layout) {
  const format::LineSplit split = format::line_split(layout);
  for (uint64_t i = 0; i < count; ++i) {
    format::EventRecord& r = records[i];
    if (r.probe == 0 || r.probe > split.probe_count) continue;
    const uint8_t marker = static_cast<uint8_t>(r.lines >> UartMsr::kPulseMarkerShift);
    r.lines &= UartMsr::kLineMask;
    r.code = split.code(r.probe - 1u, r.lines);
    if (marker & split.mask(r.probe - 1u)) r.flags |= format::kEventShortPulse;
  }
}

void UartProbe::restore(lib::IoPorts& io, const Saved& saved) {
  const lib::PortWindow uart(io, saved.base);
  uart.out8(kLcr, static_cast<uint8_t>(saved.lcr & ~kLcrDlab));
  uart.out8(kIer, saved.ier);
  uart.out8(kMcr, saved.mcr);
  uart.out8(kIir, saved.fifo_on ? kFcrEnable : 0);
  uart.out8(kLcr, saved.lcr);
}

}  // namespace ett::drivers
