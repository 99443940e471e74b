// parallel_port.cpp: finding the ECR, switching the port to input (PS/2 mode + direction bit), checking that
// the switch took, and restoring everything afterwards.
#include "drivers/probe/parallel_port.h"

#include "lib/format.h"

namespace ett::drivers {

namespace {
char g_message[224];  // the refusal messages (Error holds a static string); fits one console line
}  // namespace

const char* ParallelPort::ecr_mode_name(uint8_t mode) {
  static constexpr const char* kNames[] = {"SPP", "PS/2 (byte)", "parallel-port FIFO", "ECP",
                                           "EPP", "reserved",    "FIFO test",          "configuration"};
  return kNames[mode & 7];
}

// The test Linux's parport_pc also relies on. An old card that decodes only 10 address bits sees base+0x402
// as base+2: its "ECR" follows the control register, so toggling control bit 1 shows up there. A missing
// register reads 0xFF. A real ECR in SPP or PS/2 mode has an empty FIFO: bit 0 set, bit 1 clear.
bool ParallelPort::ecr_present(lib::IoPorts& io, Location where, uint8_t saved_control) {
  if (where.ecr_port == 0) return false;
  const lib::PortWindow port(io, where.base);
  const lib::PortWindow ecr(io, where.ecr_port);
  const uint8_t control = port.in8(kControl);
  if ((ecr.in8(kEcr) & kEcrStatusBits) == (control & kEcrStatusBits)) {
    port.out8(kControl, static_cast<uint8_t>(control ^ kAutoFeed));
    const uint8_t toggled = port.in8(kControl);
    const bool follows = (ecr.in8(kEcr) & kAutoFeed) == (toggled & kAutoFeed);
    port.out8(kControl, saved_control);
    if (follows) return false;
  }
  return (ecr.in8(kEcr) & kEcrStatusBits) == kFifoEmpty;
}

Result<ParallelPort> ParallelPort::open(lib::IoPorts& io, Location where, Mode mode) {
  const lib::PortWindow port(io, where.base);
  Saved saved{where, false, port.in8(kData), port.in8(kControl), 0};
  if (saved.control == 0xFF && port.in8(kStatus) == 0xFF && saved.data == 0xFF) {
    lib::format(g_message, sizeof(g_message),
                "no parallel port answers at I/O 0x%03x (data, status and control all read 0xff)",
                where.base);
    return fail(g_message);
  }
  saved.has_ecr = ecr_present(io, where, saved.control);
  const lib::PortWindow ecr(io, where.ecr_port);
  if (saved.has_ecr) {
    saved.ecr = ecr.in8(kEcr);
    // Every mode change may go through SPP or PS/2 (IEEE 1284 ECP register rules), so one write reaches PS/2
    // from whatever the firmware left. No FIFO, no DMA, no interrupts.
    ecr.out8(kEcr, static_cast<uint8_t>(kModePs2 << kEcrModeShift | kErrIntrDisable | kServiceIntr));
  }
  // No interrupts, not in reset, strobe/autofeed/select-in released; only the direction bit differs.
  port.out8(kControl, mode == Mode::Input ? uint8_t{kInit | kDirectionInput} : uint8_t{kInit});
  ParallelPort opened(saved);
  if (mode == Mode::Loopback) return opened;

  // Input mode: the data register now reads the lines, whatever is written to it.
  port.out8(kData, kPatternA);
  opened.m_read_a = port.in8(kData);
  port.out8(kData, kPatternB);
  opened.m_read_b = port.in8(kData);
  if (opened.m_read_a != kPatternA || opened.m_read_b != kPatternB) return opened;

  char ecr_text[80];
  if (saved.has_ecr)
    lib::format(ecr_text, sizeof(ecr_text), "ECR at 0x%03x in PS/2 mode reads 0x%02x", where.ecr_port,
                ecr.in8(kEcr));
  else if (where.ecr_port)
    lib::format(ecr_text, sizeof(ecr_text), "no ECR at 0x%03x", where.ecr_port);
  else
    lib::format(ecr_text, sizeof(ecr_text), "no ECR");
  restore(io, saved);
  // One console line (256 characters) with the "RESULT FAILED" prefix.
  lib::format(
      g_message, sizeof(g_message),
      "the parallel port at I/O 0x%03x did not switch to input (%s): read back 0x%02x and 0x%02x just "
      "written, so it still drives the lines; set it to bidirectional, ECP or EPP in the BIOS",
      where.base, ecr_text, opened.m_read_a, opened.m_read_b);
  return fail(g_message);
}

void ParallelPort::restore(lib::IoPorts& io, const Saved& saved) {
  const lib::PortWindow port(io, saved.where.base);
  port.out8(kData, saved.data);  // while the direction is still input: the latch as found
  port.out8(kControl, saved.control);
  if (saved.has_ecr)  // from PS/2 mode any mode may be entered directly
    lib::PortWindow(io, saved.where.ecr_port).out8(kEcr, static_cast<uint8_t>(saved.ecr & ~kEcrStatusBits));
}

}  // namespace ett::drivers
