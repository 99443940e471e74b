// parallel_port_test.cpp: the kernel's parallel-port setup (drivers/probe/parallel_port.cpp) against register
// models of real ports: SPP-only (bidirectional, no ECR), an old card whose ECR address aliases the control
// register, ECP ports left in SPP, PS/2 or ECP mode, a port that never switches to input (ECR stuck, output
// only, output only with the system under test overpowering its drivers), the switch again before a later
// capture, and no port at all.
#include "drivers/probe/parallel_port.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ett::drivers {
namespace {

constexpr uint16_t kBase = 0x378;
constexpr uint16_t kEcrPort = kBase + ParallelPort::kOnBoardEcrOffset;
constexpr uint8_t kDirection = 0x20;
constexpr uint8_t kModePs2 = 1, kModeSpp = 0, kModeEcp = 3;

// A parallel port as the bus sees it. `lines` is what the system under test drives; the port drives its data
// latch onto the same pins unless its output buffers are off (direction bit set and honoured).
struct PortModel final : lib::IoPorts {
  enum class Kind {
    SppBidirectional,  // no ECR (reads 0xFF there), the direction bit works: QEMU's port, pre-ECP chips
    SppAliasing,       // the same, decoding 10 address bits: base+0x402 is the control register again
    Unidirectional,    // no ECR, the direction bit does nothing: an output-only SPP
    Ecp,               // an ECR; the direction bit works only in PS/2 mode
    EcpStuck,          // an ECR that ignores mode writes, stuck in SPP mode: never switches to input
    Absent,            // nothing decodes the addresses
  };
  Kind kind;
  uint16_t base = kBase;
  uint16_t ecr_port = kEcrPort;
  uint8_t lines = 0x3C;
  uint8_t latch = 0xA5;
  uint8_t control = 0x0C;
  uint8_t ecr_mode = kModeSpp;
  uint8_t ecr_low = 0x14;  // bits 4:2 as written (nErrIntrEn, dmaEn, serviceIntr)
  uint8_t sut_strong = 0;  // lines where the system under test overpowers the port's drivers
  std::vector<std::pair<uint16_t, uint8_t>> writes;

  explicit PortModel(Kind k, uint8_t mode = kModeSpp) : kind(k), ecr_mode(mode) {}

  bool has_ecr() const { return kind == Kind::Ecp || kind == Kind::EcpStuck; }
  bool outputs_off() const {
    if (!(control & kDirection)) return false;
    switch (kind) {
      case Kind::SppBidirectional:
      case Kind::SppAliasing:
        return true;
      case Kind::Ecp:
        return ecr_mode == kModePs2;
      default:
        return false;
    }
  }
  uint8_t pins() const {
    return outputs_off() ? lines : static_cast<uint8_t>((latch & ~sut_strong) | (lines & sut_strong));
  }
  uint8_t ecr() const { return static_cast<uint8_t>(ecr_mode << 5 | ecr_low | 0x01); }  // FIFO empty

  uint8_t in8(uint16_t port) override {
    if (kind == Kind::Absent) return 0xFF;
    if (kind == Kind::SppAliasing && port == ecr_port) port = static_cast<uint16_t>(base + 2);
    if (port == base) return pins();
    if (port == base + 1) return 0x78;
    if (port == base + 2) return static_cast<uint8_t>(control | 0xC0);  // bits 7:6 unused, read as 1
    if (port == ecr_port && has_ecr()) return ecr();
    return 0xFF;
  }
  void out8(uint16_t port, uint8_t value) override {
    writes.emplace_back(port, value);
    if (kind == Kind::Absent) return;
    if (kind == Kind::SppAliasing && port == ecr_port) port = static_cast<uint16_t>(base + 2);
    if (port == base) latch = value;
    if (port == base + 2) control = static_cast<uint8_t>(value & 0x3F);
    if (port == ecr_port && has_ecr()) {
      if (kind == Kind::Ecp) ecr_mode = static_cast<uint8_t>(value >> 5);
      ecr_low = static_cast<uint8_t>(value & 0x1C);
    }
  }
  bool wrote_to(uint16_t port) const {
    for (const auto& [p, v] : writes)
      if (p == port) return true;
    return false;
  }
};

using Kind = PortModel::Kind;

Result<ParallelPort> open_input(PortModel& model) {
  return ParallelPort::open(model, {model.base, model.ecr_port}, ParallelPort::Mode::Input);
}

// After open: the pins follow the system under test, not the latch.
void expect_input(PortModel& model) {
  for (uint8_t lines : {0x00, 0x55, 0xAA, 0xFF, 0x3C}) {
    model.lines = lines;
    EXPECT_EQ(model.in8(model.base), lines);
  }
}

TEST(KernelParallelPort, SppOnlyBidirectionalPortGoesToInputWithoutTouchingAnEcr) {
  PortModel model(Kind::SppBidirectional);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_FALSE(port->has_ecr());
  EXPECT_TRUE(model.control & kDirection);
  EXPECT_EQ(port->check_read_a(), 0x3C);
  EXPECT_EQ(port->check_read_b(), 0x3C);
  EXPECT_FALSE(model.wrote_to(kEcrPort));
  expect_input(model);

  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.latch, 0xA5);  // drives what it drove before
  EXPECT_EQ(model.pins(), 0xA5);
}

TEST(KernelParallelPort, AliasedEcrAddressOfA10BitCardIsNotTakenForAnEcr) {
  PortModel model(Kind::SppAliasing);
  model.control = 0x0D;  // low bits equal to what the "ECR" reads there: the toggle test decides
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_FALSE(port->has_ecr());
  expect_input(model);
  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.control, 0x0D);
}

TEST(KernelParallelPort, EcpPortInSppModeIsSwitchedToPs2ModeThenRestored) {
  PortModel model(Kind::Ecp, kModeSpp);
  model.lines = 0x0F;
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_TRUE(port->has_ecr());
  EXPECT_EQ(port->firmware_ecr_mode(), kModeSpp);
  EXPECT_STREQ(ParallelPort::ecr_mode_name(port->firmware_ecr_mode()), "SPP");
  EXPECT_EQ(model.ecr_mode, kModePs2);
  EXPECT_EQ(model.ecr_low & 0x18, 0x10) << "error interrupt off, DMA off";
  EXPECT_EQ(port->check_read_a(), 0x0F);
  expect_input(model);

  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.ecr_mode, kModeSpp);
  EXPECT_EQ(model.ecr_low, 0x14);
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.pins(), 0xA5);
  // The ECR is written last: the control register goes back while the port is still in PS/2 mode.
  ASSERT_FALSE(model.writes.empty());
  EXPECT_EQ(model.writes.back().first, kEcrPort);
}

TEST(KernelParallelPort, EcpPortAlreadyInPs2ModeStaysThere) {
  PortModel model(Kind::Ecp, kModePs2);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_TRUE(port->has_ecr());
  EXPECT_EQ(port->firmware_ecr_mode(), kModePs2);
  expect_input(model);
  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.ecr_mode, kModePs2);
}

TEST(KernelParallelPort, EcpPortLeftInEcpModeGoesThroughPs2AndBack) {
  PortModel model(Kind::Ecp, kModeEcp);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ(port->firmware_ecr_mode(), kModeEcp);
  expect_input(model);
  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.ecr_mode, kModeEcp);
}

TEST(KernelParallelPort, PciCardEcrInItsSecondBarIsUsed) {
  PortModel model(Kind::Ecp, kModeSpp);
  model.base = 0xE000;
  model.ecr_port = 0xE102;
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_TRUE(port->has_ecr());
  EXPECT_EQ(model.ecr_mode, kModePs2);
  expect_input(model);
  EXPECT_FALSE(model.wrote_to(0xE000 + ParallelPort::kOnBoardEcrOffset));
}

TEST(KernelParallelPort, EcrThatDoesNotTakePs2ModeIsRefusedByItsReadBack) {
  PortModel model(Kind::EcpStuck, kModeSpp);
  auto port = open_input(model);
  ASSERT_FALSE(port);
  EXPECT_EQ(
      std::string(port.error().message),
      "the parallel port at I/O 0x378 did not switch to input: its ECR at 0x77a read 0x15 (SPP mode) after "
      "PS/2 mode (0x34) was written; set it to ECP or EPP in the BIOS");
  // Refused and put back as it was.
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.latch, 0xA5);
  EXPECT_EQ(model.ecr_low, 0x14);
}

TEST(KernelParallelPort, EcrReadBackIsReported) {
  PortModel model(Kind::Ecp, kModeEcp);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ(port->check().ecr, 0x35);  // PS/2 mode, interrupts and DMA off, FIFO empty
  EXPECT_EQ(port->check().clear_a, 0x55);
  EXPECT_EQ(port->check().clear_b, 0xAA);
  EXPECT_EQ(port->check().set_a, 0x3C);
  EXPECT_EQ(port->check().set_b, 0x3C);
}

TEST(KernelParallelPort, OutputOnlyPortWithoutEcrIsRefused) {
  PortModel model(Kind::Unidirectional);
  auto port = open_input(model);
  ASSERT_FALSE(port);
  EXPECT_EQ(
      std::string(port.error().message),
      "the parallel port at I/O 0x378 did not switch to input (no ECR at 0x77a): with the direction bit set "
      "it read 0x55/0xaa after 0x55/0xaa, so it drives the lines; set it to bidirectional, ECP or EPP in "
      "the BIOS");
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.latch, 0xA5);
}

// The system under test drives some lines harder than the port: the reads are neither the bytes written nor
// the lines, and the port still drives the rest.
TEST(KernelParallelPort, OutputOnlyPortPartlyOverpoweredByTheSystemUnderTestIsRefused) {
  PortModel model(Kind::Unidirectional);
  model.sut_strong = 0x0F;
  auto port = open_input(model);
  ASSERT_FALSE(port);
  EXPECT_NE(std::string(port.error().message)
                .find("with the direction bit set it read 0x5c/0xac after 0x55/0xaa, so it drives the lines"),
            std::string::npos)
      << port.error().message;
  EXPECT_EQ(model.control, 0x0C);
}

// All lines overpowered: the port reads the lines with the direction bit set and clear alike, so nothing
// shows whether it switched; it is refused rather than trusted.
TEST(KernelParallelPort, PortThatReadsTheSameWithTheDirectionBitSetAndClearIsRefused) {
  PortModel model(Kind::Unidirectional);
  model.sut_strong = 0xFF;
  auto port = open_input(model);
  ASSERT_FALSE(port);
  EXPECT_EQ(
      std::string(port.error().message),
      "the parallel port at I/O 0x378 did not switch to input (no ECR at 0x77a): it read 0x3c/0x3c with "
      "the direction bit set and clear alike, so it does not switch; set it to bidirectional, ECP or EPP "
      "in the BIOS");
}

// A bidirectional port with the system under test driving some lines: the reads with the bit clear are mixed,
// with it set they are the lines.
TEST(KernelParallelPort, BidirectionalPortWithTheSystemUnderTestDrivingIsTaken) {
  PortModel model(Kind::Ecp, kModeSpp);
  model.sut_strong = 0x0F;
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ(port->check().clear_a, 0x5C);
  EXPECT_EQ(port->check().set_a, 0x3C);
  EXPECT_EQ(port->check().set_b, 0x3C);
  expect_input(model);
}

// What happens between two captures: something (here restore(), as the kernel did after every capture)
// leaves the port driving again; arm() before the next capture switches it back and checks it.
TEST(KernelParallelPort, ArmSwitchesThePortBackToInputBeforeTheNextCapture) {
  PortModel model(Kind::Ecp, kModeSpp);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  ParallelPort::restore(model, port->saved());
  ASSERT_EQ(model.pins(), 0xA5) << "restored: drives its latch again";
  auto check = ParallelPort::arm(model, port->saved(), ParallelPort::Mode::Input);
  ASSERT_TRUE(check) << check.error().message;
  EXPECT_EQ(model.ecr_mode, kModePs2);
  EXPECT_TRUE(model.control & kDirection);
  EXPECT_EQ(check->set_a, model.lines);
  expect_input(model);
}

// A port that stops switching between captures (the ECR now ignores the mode write) is refused before the
// capture, and left with the direction bit set rather than restored to driving.
TEST(KernelParallelPort, ArmRefusesAPortThatNoLongerSwitchesAndLeavesItNotAskedToDrive) {
  PortModel model(Kind::Ecp, kModeSpp);
  auto port = open_input(model);
  ASSERT_TRUE(port) << port.error().message;
  model.kind = Kind::EcpStuck;
  model.ecr_mode = kModeSpp;
  auto check = ParallelPort::arm(model, port->saved(), ParallelPort::Mode::Input);
  ASSERT_FALSE(check);
  EXPECT_NE(std::string(check.error().message).find("its ECR at 0x77a read 0x15 (SPP mode)"),
            std::string::npos)
      << check.error().message;
  EXPECT_TRUE(model.control & kDirection);
}

// A line of the system under test that changes between the two reads of a round does not refuse a good port:
// another round is read.
TEST(KernelParallelPort, LineChangingDuringTheCheckIsReadAgain) {
  struct Changing final : lib::IoPorts {
    PortModel& port;
    int reads = 0;
    explicit Changing(PortModel& p) : port(p) {}
    uint8_t in8(uint16_t p) override {
      if (p == port.base && (port.control & kDirection)) port.lines = ++reads == 1 ? 0x01 : 0x03;
      return port.in8(p);
    }
    void out8(uint16_t p, uint8_t value) override { port.out8(p, value); }
  };
  PortModel model(Kind::SppBidirectional);
  Changing io(model);
  auto port = ParallelPort::open(io, {kBase, kEcrPort}, ParallelPort::Mode::Input);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ(port->check().set_a, 0x03);
  EXPECT_EQ(port->check().set_b, 0x03);
}

TEST(KernelParallelPort, NoPortAtTheBaseIsRefused) {
  PortModel model(Kind::Absent);
  model.base = 0x278;
  auto port = ParallelPort::open(model, ParallelPort::Location::on_board(0x278), ParallelPort::Mode::Input);
  ASSERT_FALSE(port);
  EXPECT_EQ(std::string(port.error().message),
            "no parallel port answers at I/O 0x278 (data, status and control all read 0xff)");
  EXPECT_TRUE(model.writes.empty());
}

TEST(KernelParallelPort, LoopbackLeavesTheDirectionClearAndTheLatchAlone) {
  PortModel model(Kind::Ecp, kModeSpp);
  auto port = ParallelPort::open(model, {kBase, kEcrPort}, ParallelPort::Mode::Loopback);
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_FALSE(model.control & kDirection);
  EXPECT_FALSE(model.wrote_to(kBase));
  EXPECT_EQ(model.pins(), 0xA5);
  ParallelPort::restore(model, port->saved());
  EXPECT_EQ(model.ecr_mode, kModeSpp);
}

}  // namespace
}  // namespace ett::drivers
