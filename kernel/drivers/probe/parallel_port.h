// parallel_port.h: a PC parallel port (on-board, or a PCI card's registers) opened as the capture's probe.
//
// Two modes, kept apart on purpose:
//  - Input: the real probe. The data lines must be inputs driven by the system under test. Control bit 5
//    (direction) does that on a bidirectional port, but an ECP port (every on-board port since the late
//    1990s, every PCI card) ignores it unless its Extended Control Register (ECR) is in PS/2 (byte) mode: in
//    SPP mode it keeps driving its latched byte against the system under test. So arm() writes PS/2 mode to
//    the ECR and reads the mode back, then writes two complementary bytes with the direction bit clear and
//    again with it set. With the bit set the port must read its lines, so the two reads must not follow the
//    bytes written; and the reads with the bit set must differ from those with it clear (a port that reads
//    the same both ways is not switching: an output-only port whose latch the system under test
//    overpowers). A port that fails is refused, naming the port, the ECR and every byte read.
//    arm() runs when the port is opened and again before every capture (the port may have been changed
//    since).
//  - Loopback (probe=lpt-loopback, tests only): direction bit clear, so the data register reads back the last
//    value written to it; under QEMU the monitor command `o/b 0x378 VALUE` sets it. It exercises the same
//    read path as Input, but captures nothing on real hardware.
// open() saves data latch, control register and ECR; restore() puts them back, which makes an SPP-mode port
// drive its latch again: only for a kernel that leaves the port for good (exit=qemu), never between captures.
// Written against lib::IoPorts, so that the host tests run this source against register models.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/io_ports.h"

namespace ett::drivers {

class ParallelPort {
 public:
  enum class Mode : uint8_t { Input, Loopback };
  static constexpr uint16_t kDefaultBase = 0x378;
  // On-board ports: the ECP registers are 0x400 above the SPP block, the ECR the third of them.
  static constexpr uint16_t kOnBoardEcrOffset = 0x402;

  // Where the registers are: the SPP block (data, status, control) and the ECR (0: there is no place for
  // one).
  struct Location {
    uint16_t base;
    uint16_t ecr_port;
    static Location on_board(uint16_t base) {
      return {base, static_cast<uint16_t>(base + kOnBoardEcrOffset)};
    }
  };

  // What the port was before open(), for restore().
  struct Saved {
    Location where;
    bool has_ecr;
    uint8_t data;  // the data latch (what the port drove, when it was an output)
    uint8_t control;
    uint8_t ecr;
  };

  // What arm() read: the ECR after PS/2 mode was written (when there is one), and the data register after
  // kPatternA and kPatternB were written with the direction bit clear (the port drives its latch) and set
  // (the lines).
  struct Check {
    uint8_t ecr;
    uint8_t clear_a, clear_b;
    uint8_t set_a, set_b;
  };

  // Saves the registers, then arm(). Fails when nothing answers at the base (every register reads 0xFF) or
  // when arm() refuses the port; a refused port is restored before open() returns.
  static Result<ParallelPort> open(lib::IoPorts& io, Location where, Mode mode);
  // Switches the port opened as `saved` to `mode` again and, in Input mode, checks that its data lines are
  // inputs (see the top of this file; the message names the port, the ECR and the bytes read). A refused
  // port is left with the direction bit set, the best chance of not driving; the caller restores it when it
  // gives the port up.
  static Result<Check> arm(lib::IoPorts& io, const Saved& saved, Mode mode);
  // Puts back data latch, control register and ECR as open() found them.
  static void restore(lib::IoPorts& io, const Saved& saved);

  const Saved& saved() const { return m_saved; }
  uint16_t base() const { return m_saved.where.base; }
  uint16_t data_port() const { return static_cast<uint16_t>(base() + kData); }
  bool has_ecr() const { return m_saved.has_ecr; }
  // The ECR mode (bits 7:5) the firmware had left: 0 SPP, 1 PS/2, 2 parallel FIFO, 3 ECP, 4 EPP, ...
  uint8_t firmware_ecr_mode() const { return static_cast<uint8_t>(m_saved.ecr >> kEcrModeShift); }
  static const char* ecr_mode_name(uint8_t mode);
  // Input mode: what open()'s arm() read.
  const Check& check() const { return m_check; }
  uint8_t check_read_a() const { return m_check.set_a; }
  uint8_t check_read_b() const { return m_check.set_b; }

 private:
  enum Reg : uint8_t {
    kData = 0,
    kStatus = 1,
    kControl = 2,
  };
  enum ControlBit : uint8_t {
    kStrobe = 1u << 0,
    kAutoFeed = 1u << 1,
    kInit = 1u << 2,  // active low: keep it high so the port is not held in reset
    kSelectIn = 1u << 3,
    kIrqEnable = 1u << 4,
    kDirectionInput =
        1u << 5,  // bidirectional ports (ECP ports only in PS/2 mode): the data lines are inputs
  };
  // The ECR (IEEE 1284 Extended Capabilities Port register set, at ECP base + 2).
  enum EcrReg : uint8_t { kEcr = 0 };
  enum EcrBit : uint8_t {
    kFifoEmpty = 1u << 0,    // read-only
    kFifoFull = 1u << 1,     // read-only
    kServiceIntr = 1u << 2,  // 1: DMA and service interrupts off
    kDmaEnable = 1u << 3,
    kErrIntrDisable = 1u << 4,  // nErrIntrEn: 1 = no interrupt on nFault
  };
  static constexpr uint8_t kEcrModeShift = 5;
  enum EcrMode : uint8_t {
    kModeSpp = 0,  // standard: output only, the direction bit is ignored
    kModePs2 = 1,  // byte mode: bidirectional, the direction bit works
  };
  static constexpr uint8_t kEcrStatusBits = kFifoEmpty | kFifoFull;
  // The ECR value arm() writes: PS/2 mode, no FIFO, no DMA, no interrupts.
  static constexpr uint8_t kEcrPs2 = kModePs2 << kEcrModeShift | kErrIntrDisable | kServiceIntr;
  // Rounds of the direction-bit-set reads: one whose two reads agree is enough (a line of the system under
  // test may change between the two reads of one round; a port that drives fails every round).
  static constexpr int kCheckRounds = 3;
  // Two bytes that differ in every bit: a port that still drives its lines reads back each of them.

 public:
  static constexpr uint8_t kPatternA = 0x55;
  static constexpr uint8_t kPatternB = 0xAA;

 private:
  explicit ParallelPort(const Saved& saved) : m_saved(saved) {}

  static bool ecr_present(lib::IoPorts& io, Location where, uint8_t saved_control);

  Saved m_saved;
  Check m_check{};
};

}  // namespace ett::drivers
