// parallel_port.cpp: finding the ECR, switching the port to input (PS/2 mode + direction bit), checking that
// the switch took (before every capture), and restoring everything when the kernel leaves the port.
#include "drivers/probe/parallel_port.h"

#include "lib/format.h"

namespace ett::drivers {

namespace {
char g_message[240];  // the refusal messages (Error holds a static string); fits one console line
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
  if (saved.has_ecr) saved.ecr = lib::PortWindow(io, where.ecr_port).in8(kEcr);
  auto check = arm(io, saved, mode);
  if (!check) {
    restore(io, saved);
    return check.failure();
  }
  ParallelPort opened(saved);
  opened.m_check = *check;
  return opened;
}

Result<ParallelPort::Check> ParallelPort::arm(lib::IoPorts& io, const Saved& saved, Mode mode) {
  const Location where = saved.where;
  const lib::PortWindow port(io, where.base);
  const lib::PortWindow ecr(io, where.ecr_port);
  Check check{};
  if (saved.has_ecr) {
    // Every mode change may go through SPP or PS/2 (IEEE 1284 ECP register rules), so one write reaches PS/2
    // from whatever was there. Read back: an ECR that keeps another mode leaves the direction bit ignored.
    ecr.out8(kEcr, kEcrPs2);
    check.ecr = ecr.in8(kEcr);
    if (check.ecr >> kEcrModeShift != kModePs2) {
      port.out8(kControl, uint8_t{kInit | kDirectionInput});  // whatever it does with it: not asked to drive
      lib::format(
          g_message, sizeof(g_message),
          "the parallel port at I/O 0x%03x did not switch to input: its ECR at 0x%03x read 0x%02x (%s "
          "mode) after PS/2 mode (0x%02x) was written; set it to ECP or EPP in the BIOS",
          where.base, where.ecr_port, check.ecr, ecr_mode_name(check.ecr >> kEcrModeShift), kEcrPs2);
      return fail(g_message);
    }
  }
  // No interrupts, not in reset, strobe/autofeed/select-in released; only the direction bit differs.
  if (mode == Mode::Loopback) {
    port.out8(kControl, kInit);
    return check;
  }
  // Direction bit clear: the port drives the two bytes (for a few microseconds) and reads them back.
  port.out8(kControl, kInit);
  port.out8(kData, kPatternA);
  check.clear_a = port.in8(kData);
  port.out8(kData, kPatternB);
  check.clear_b = port.in8(kData);
  // Direction bit set: the data register reads the lines, whatever is written to it.
  port.out8(kControl, uint8_t{kInit | kDirectionInput});
  for (int round = 0; round < kCheckRounds; ++round) {
    port.out8(kData, kPatternA);
    check.set_a = port.in8(kData);
    port.out8(kData, kPatternB);
    check.set_b = port.in8(kData);
    if (check.set_a == check.set_b) break;
  }
  const bool follows = check.set_a != check.set_b;
  const bool same = check.set_a == check.clear_a && check.set_b == check.clear_b;
  if (!follows && !same) return check;

  char ecr_text[64];
  if (saved.has_ecr)
    lib::format(ecr_text, sizeof(ecr_text), "ECR at 0x%03x reads 0x%02x", where.ecr_port, check.ecr);
  else if (where.ecr_port)
    lib::format(ecr_text, sizeof(ecr_text), "no ECR at 0x%03x", where.ecr_port);
  else
    lib::format(ecr_text, sizeof(ecr_text), "no ECR");
  // One console line (256 characters) with the "ETT: RESULT FAILED " prefix.
  if (follows)
    lib::format(
        g_message, sizeof(g_message),
        "the parallel port at I/O 0x%03x did not switch to input (%s): with the direction bit set it "
        "read 0x%02x/0x%02x after 0x%02x/0x%02x, so it drives the lines; set it to bidirectional, ECP "
        "or EPP in the BIOS",
        where.base, ecr_text, check.set_a, check.set_b, kPatternA, kPatternB);
  else
    lib::format(
        g_message, sizeof(g_message),
        "the parallel port at I/O 0x%03x did not switch to input (%s): it read 0x%02x/0x%02x with the "
        "direction bit set and clear alike, so it does not switch; set it to bidirectional, ECP or EPP "
        "in the BIOS",
        where.base, ecr_text, check.set_a, check.set_b);
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
