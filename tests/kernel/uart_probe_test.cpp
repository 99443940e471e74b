// uart_probe_test.cpp: the UART probe's setup (drivers/probe/uart_probe.cpp) against register models of an
// 8250, a 16450, a 16550 (unusable FIFO), a 16550A, an Oxford 16C950 (ID registers behind EFR/SPR/ICR), a
// card whose UART sits at an offset inside its I/O BAR, a UART whose loopback does not work, and no UART at
// all (a floating bus reading 0xff); the console's port refused by name; and the MSR decoding the capture
// loop uses (short pulses from the delta bits) with the engine's marking of the records.
#include "drivers/probe/uart_probe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "uart_model.h"

namespace ett::drivers {
namespace {

struct KindCase {
  UartModel::Kind model;
  UartProbe::Kind expected;
};

TEST(UartProbe, IdentifiesEachKindAndPassesItsLoopbackTest) {
  for (const KindCase c : {KindCase{UartModel::Kind::U8250, UartProbe::Kind::Uart8250},
                           KindCase{UartModel::Kind::U16450, UartProbe::Kind::Uart16450},
                           KindCase{UartModel::Kind::U16550, UartProbe::Kind::Uart16550},
                           KindCase{UartModel::Kind::U16550A, UartProbe::Kind::Uart16550A},
                           KindCase{UartModel::Kind::U16C950, UartProbe::Kind::Uart16C950}}) {
    UartModel uart(c.model);
    auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Input);
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->kind(), c.expected) << UartProbe::kind_name(c.expected);
    EXPECT_EQ(opened->msr_port(), kCom2 + 6);
    // Input: interrupts off, loopback off, the outputs (DTR, RTS, OUT2) as found.
    EXPECT_EQ(uart.ier, 0);
    EXPECT_EQ(uart.mcr, 0x0B);
    EXPECT_EQ(uart.lcr, 0x03);
    EXPECT_EQ(uart.efr, 0) << "EFR back to 0 on the 16C950";
    EXPECT_FALSE(uart.fifo) << "FIFO enable as found";
  }
}

TEST(UartProbe, InputModeClearsTheDeltaBitsAndReadsThePins) {
  UartModel uart(UartModel::Kind::U16550A);
  uart.inputs = UartMsr::kDcd | UartMsr::kCts;
  uart.deltas = UartMsr::kDeltaDsr;  // a change from before the capture
  auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Input);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->armed_msr() & 0xF0, UartMsr::kDcd | UartMsr::kCts);
  EXPECT_EQ(uart.deltas, 0);
  EXPECT_EQ(UartMsr::lines(opened->armed_msr()), UartMsr::kLineDcd | UartMsr::kLineCts);
}

TEST(UartProbe, LoopbackModeSetsMcrBit4WithEveryOutputOff) {
  UartModel uart(UartModel::Kind::U16550A);
  auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Loopback);
  ASSERT_TRUE(opened);
  EXPECT_EQ(uart.mcr, 0x10);
  EXPECT_EQ(opened->armed_msr(), 0);
  // The monitor's `o/b 0x2fc 0x19` (loop + DTR + OUT2): DSR and DCD.
  uart.out8(kCom2 + 4, 0x19);
  EXPECT_EQ(UartMsr::lines(uart.in8(kCom2 + 6)), UartMsr::kLineDsr | UartMsr::kLineDcd);
  // arm() before a later capture switches it back to loopback with the outputs off.
  uart.mcr = 0x03;
  UartProbe::arm(uart, opened->saved(), UartProbe::Mode::Loopback);
  EXPECT_EQ(uart.mcr, 0x10);
}

TEST(UartProbe, RestorePutsTheRegistersBack) {
  UartModel uart(UartModel::Kind::U16550A);
  uart.fifo = true;
  uart.ier = 0x03;
  uart.lcr = 0x83;  // DLAB left set
  auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Loopback);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(uart.lcr, 0x03);
  UartProbe::restore(uart, opened->saved());
  EXPECT_EQ(uart.mcr, 0x0B);
  EXPECT_EQ(uart.lcr, 0x83);
  uart.lcr = 0x03;
  EXPECT_EQ(uart.in8(kCom2 + 1), 0x03);
  EXPECT_TRUE(uart.fifo);
}

// A PCI card's UART inside its I/O BAR (e.g. BAR0 + 0x10, with other registers around it): the probe reads
// only the eight ports from the base it is given.
TEST(UartProbe, UartAtAnOffsetInsideACardsBar) {
  UartModel uart(UartModel::Kind::U16C950, 0xD010);
  auto opened = UartProbe::open(uart, 0xD010, kCom1, UartProbe::Mode::Input);
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->kind(), UartProbe::Kind::Uart16C950);
  EXPECT_EQ(opened->msr_port(), 0xD016);
  EXPECT_FALSE(UartProbe::open(uart, 0xD000, kCom1, UartProbe::Mode::Input));
}

TEST(UartProbe, FloatingBusIsRefusedByName) {
  UartModel uart(UartModel::Kind::Absent);
  auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Input);
  ASSERT_FALSE(opened);
  EXPECT_EQ(std::string(opened.error().message),
            "no UART answers at I/O 0x2f8 (its interrupt enable register read 0x0f/0x0f after 0x00/0x0f were "
            "written)");
}

TEST(UartProbe, BrokenLoopbackIsRefusedAndRestored) {
  UartModel uart(UartModel::Kind::NoLoopback);
  auto opened = UartProbe::open(uart, kCom2, kCom1, UartProbe::Mode::Input);
  ASSERT_FALSE(opened);
  EXPECT_EQ(
      std::string(opened.error().message),
      "the UART at I/O 0x2f8 failed its loopback test: with MCR 0x1a its modem-status inputs read 0x00, "
      "expected 0x90");
  EXPECT_EQ(uart.mcr, 0x0B);
  EXPECT_EQ(uart.ier, 0x05);
}

TEST(UartProbe, TheConsolesPortIsRefusedByNameWithoutTouchingIt) {
  UartModel uart(UartModel::Kind::U16550A, kCom1);
  auto opened = UartProbe::open(uart, kCom1, kCom1, UartProbe::Mode::Loopback);
  ASSERT_FALSE(opened);
  EXPECT_NE(std::string(opened.error().message).find("0x3f8 is COM1, the kernel's serial console"),
            std::string::npos)
      << opened.error().message;
  EXPECT_EQ(uart.accesses, 0);
}

// --- the MSR decoding the capture loop uses (uart_lines.h), driven through the model's pins

TEST(UartMsr, LinesOrderIsDcdDsrCtsRi) {
  EXPECT_EQ(UartMsr::lines(UartMsr::kDcd), 0x01);
  EXPECT_EQ(UartMsr::lines(UartMsr::kDsr), 0x02);
  EXPECT_EQ(UartMsr::lines(UartMsr::kCts), 0x04);
  EXPECT_EQ(UartMsr::lines(UartMsr::kRi), 0x08);
  EXPECT_EQ(UartMsr::lines(0x0F), 0) << "delta bits are not lines";
  for (uint32_t lines = 0; lines < 16; ++lines) EXPECT_EQ(UartMsr::lines(UartMsr::status(lines)), lines);
}

TEST(UartMsr, AnEdgeSeenAtAPollIsOneChange) {
  UartModel uart(UartModel::Kind::U16550A);
  uart.drive(UartMsr::kCts);
  const auto change = UartMsr::change(uart.in8(kCom2 + 6), 0, 0x0F);
  EXPECT_EQ(change.second, 0) << "no second result";
  EXPECT_EQ(change.first, UartMsr::kLineCts);
}

TEST(UartMsr, APulseBetweenTwoPollsGivesBothEdgesMarked) {
  UartModel uart(UartModel::Kind::U16550A);
  uart.inputs = UartMsr::kDsr;
  const uint8_t last = UartMsr::kLineDsr;
  uart.drive(UartMsr::kDsr | UartMsr::kDcd);  // DCD up and down between two polls
  uart.drive(UartMsr::kDsr);
  const uint8_t msr = uart.in8(kCom2 + 6);
  EXPECT_NE(msr & UartMsr::watched(0x0F), UartMsr::status(last)) << "the idle step leaves on the delta bit";
  const auto change = UartMsr::change(msr, last, 0x0F);
  ASSERT_NE(change.second, 0);
  EXPECT_EQ(change.first & 0x0F, UartMsr::kLineDsr | UartMsr::kLineDcd);
  EXPECT_EQ(change.second & 0x0F, UartMsr::kLineDsr);
  EXPECT_EQ(change.first >> 4, UartMsr::kLineDcd);
  EXPECT_EQ(change.second >> 4, UartMsr::kLineDcd);
  // The read cleared the latch: the next poll is quiet.
  EXPECT_EQ(uart.in8(kCom2 + 6) & UartMsr::watched(0x0F), UartMsr::status(last));
}

TEST(UartMsr, RiLatchesOnlyItsTrailingEdge) {
  UartModel uart(UartModel::Kind::U16550A);
  uart.drive(UartMsr::kRi);  // leading edge then back: TERI on the way back
  uart.drive(0);
  auto change = UartMsr::change(uart.in8(kCom2 + 6), 0, 0x0F);
  ASSERT_NE(change.second, 0);
  EXPECT_EQ(change.first, UartMsr::kLineRi | UartMsr::kLineRi << 4);
  uart.drive(UartMsr::kRi);  // a rising edge alone latches nothing, but the input reads 1: one change
  change = UartMsr::change(uart.in8(kCom2 + 6), 0, 0x0F);
  EXPECT_EQ(change.second, 0) << "no second result";
  EXPECT_EQ(change.first, UartMsr::kLineRi);
}

TEST(UartMsr, FilterLimitsThePulsesAndTheWatchedBits) {
  EXPECT_EQ(UartMsr::watched(UartMsr::kLineDcd | UartMsr::kLineRi), 0xCC);
  const auto change = UartMsr::change(UartMsr::kDeltaDcd | UartMsr::kDeltaCts, 0, UartMsr::kLineCts);
  ASSERT_NE(change.second, 0);
  EXPECT_EQ(change.first, UartMsr::kLineCts | UartMsr::kLineCts << 4);
}

format::EventRecord record(uint8_t probe, uint8_t lines, uint8_t code) {
  return {100, probe, code, lines, 0, 0};
}

TEST(UartProbe, MarkShortPulsesFlagsTheMarkedProbesAndClearsTheMarkers) {
  // 8x1: a DCD pulse (two records of probe 1) next to a real CTS edge (probe 3) from the same read.
  std::vector<format::EventRecord> records = {record(1, 0x15, 1), record(3, 0x15, 1), record(1, 0x14, 0),
                                              record(2, 0x02, 1)};
  UartProbe::mark_short_pulses(records.data(), records.size(), format::Layout::Single8x1);
  EXPECT_EQ(records[0].flags, format::kEventShortPulse);
  EXPECT_EQ(records[0].lines, 0x05);
  EXPECT_EQ(records[1].flags, 0) << "CTS changed for real";
  EXPECT_EQ(records[2].flags, format::kEventShortPulse);
  EXPECT_EQ(records[2].lines, 0x04);
  EXPECT_EQ(records[3].flags, 0);
  // 1x8: the code is the whole byte, markers removed.
  std::vector<format::EventRecord> byte = {record(1, 0x83, 0x83)};
  UartProbe::mark_short_pulses(byte.data(), byte.size(), format::Layout::Byte1x8);
  EXPECT_EQ(byte[0].code, 0x03);
  EXPECT_EQ(byte[0].flags, format::kEventShortPulse);
  // Calibrate records (probe 0) stay as they are.
  std::vector<format::EventRecord> steps = {record(0, 0x33, 0x33)};
  UartProbe::mark_short_pulses(steps.data(), steps.size(), format::Layout::Double2x4);
  EXPECT_EQ(steps[0].lines, 0x33);
}

}  // namespace
}  // namespace ett::drivers
