// parallel_port_test.cpp: the kernel's parallel-port setup (drivers/probe/parallel_port.cpp) against register
// models of real ports: SPP-only (bidirectional, no ECR), an old card whose ECR address aliases the control
// register, ECP ports left in SPP, PS/2 or ECP mode, a port that never switches to input, and no port at all.
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
  uint8_t pins() const { return outputs_off() ? lines : latch; }
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

TEST(KernelParallelPort, PortThatNeverSwitchesIsRefusedNamingPortEcrAndBytesRead) {
  PortModel model(Kind::EcpStuck, kModeSpp);
  auto port = open_input(model);
  ASSERT_FALSE(port);
  EXPECT_EQ(
      std::string(port.error().message),
      "the parallel port at I/O 0x378 did not switch to input (ECR at 0x77a in PS/2 mode reads 0x15): read "
      "back 0x55 and 0xaa just written, so it still drives the lines; set it to bidirectional, ECP or EPP in "
      "the BIOS");
  // Refused and put back as it was.
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.latch, 0xA5);
  EXPECT_EQ(model.ecr_low, 0x14);
}

TEST(KernelParallelPort, OutputOnlyPortWithoutEcrIsRefused) {
  PortModel model(Kind::Unidirectional);
  auto port = open_input(model);
  ASSERT_FALSE(port);
  const std::string message = port.error().message;
  EXPECT_NE(message.find("at I/O 0x378 did not switch to input (no ECR at 0x77a)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("read back 0x55 and 0xaa just written"), std::string::npos) << message;
  EXPECT_EQ(model.control, 0x0C);
  EXPECT_EQ(model.latch, 0xA5);
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
