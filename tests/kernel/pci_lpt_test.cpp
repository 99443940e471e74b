// pci_lpt_test.cpp: which PCI parallel cards the kernel takes (class 07/01 with an interface that can read
// its lines, or a card of the list by vendor:device whatever its class) and which BARs hold the SPP registers
// and the ECR (drivers/probe/pci_lpt_registers.cpp).
#include "drivers/probe/pci_lpt.h"

#include <gtest/gtest.h>

namespace ett::drivers {
namespace {

x86::pci::Bar io(uint64_t address, uint64_t size) {
  return {address, size, true, false, false};
}
x86::pci::Bar memory(uint64_t address, uint64_t size) {
  return {address, size, false, false, false};
}

TEST(KernelPciLpt, OnlyParallelInterfacesThatCanReadTheirLines) {
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x01));   // bidirectional
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x02));   // ECP
  EXPECT_TRUE(PciLpt::can_do_input(0x07, 0x01, 0x03));   // IEEE 1284 controller
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x01, 0x00));  // SPP: output only
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x01, 0xFE));  // the printer's side
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x00, 0x02));  // a serial port (16550)
  EXPECT_FALSE(PciLpt::can_do_input(0x01, 0x01, 0x01));
  EXPECT_STREQ(PciLpt::interface_name(0x00), "SPP, output only");
}

TEST(KernelPciLpt, SppInTheFirstIoBarEcrInTheSecond) {
  const x86::pci::Bar bars[6] = {io(0xE000, 8), io(0xE100, 4), {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_bar, 0);
  EXPECT_EQ(r->spp_base, 0xE000);
  EXPECT_EQ(r->ecr_bar, 1);
  EXPECT_EQ(r->ecr_port, 0xE102);
}

TEST(KernelPciLpt, MemoryAndUnassignedBarsAreSkipped) {
  const x86::pci::Bar bars[6] = {memory(0xFEB00000, 4096), io(0, 8),      io(0xD000, 8),
                                 memory(0xFEB01000, 4096), io(0xD010, 8), {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_bar, 2);
  EXPECT_EQ(r->spp_base, 0xD000);
  EXPECT_EQ(r->ecr_bar, 4);
  EXPECT_EQ(r->ecr_port, 0xD012);
}

TEST(KernelPciLpt, ACardWithOneIoBarHasNoEcr) {
  const x86::pci::Bar bars[6] = {io(0xC000, 8), {}, {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_base, 0xC000);
  EXPECT_EQ(r->ecr_port, 0);
}

TEST(KernelPciLpt, NoUsableIoBarIsAnError) {
  const x86::pci::Bar bars[6] = {memory(0xFEB00000, 4096), io(0xC000, 2), {}, {}, {}, {}};
  auto r = PciLpt::choose_registers(bars);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.error().message).find("no usable I/O BAR"), std::string::npos);
}

using Verdict = PciLpt::Verdict;

// The WCH CH382L as lspci shows it: "Serial controller [0700]: ... (prog-if 05 [16850])", its parallel port
// in BAR2 (BAR0 and BAR1 are the chip's other register blocks).
TEST(KernelPciLpt, Ch382lReportingASerialControllerIsTakenWithItsPortInBar2) {
  const PciLpt::Match m = PciLpt::match({0x1C00, 0x3050, 0x07, 0x00, 0x05});
  ASSERT_EQ(m.verdict, Verdict::Take);
  ASSERT_NE(m.card, nullptr);
  EXPECT_STREQ(m.card->name, "WCH CH382L");
  const x86::pci::Bar bars[6] = {io(0xD000, 8), io(0xD100, 4), io(0xD200, 4), {}, {}, {}};
  auto r = PciLpt::card_registers(*m.card, bars);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spp_bar, 2);
  EXPECT_EQ(r->spp_base, 0xD200);
  EXPECT_EQ(r->ecr_port, 0) << "no ECR BAR in Linux's table";
  // The class rule alone would have refused it, and the first-I/O-BAR rule would have taken BAR0.
  EXPECT_FALSE(PciLpt::can_do_input(0x07, 0x00, 0x05));
  EXPECT_EQ(PciLpt::choose_registers(bars)->spp_bar, 0);
}

TEST(KernelPciLpt, ComboCardOfClass0700Or0780FromTheListIsTaken) {
  for (const uint8_t subclass : {uint8_t{0x00}, uint8_t{0x80}}) {
    const PciLpt::Match m = PciLpt::match({0x4348, 0x7053, 0x07, subclass, 0x02});
    ASSERT_EQ(m.verdict, Verdict::Take) << int(subclass);
    ASSERT_NE(m.card, nullptr);
    EXPECT_STREQ(m.card->name, "WCH CH353 2S1P");
    EXPECT_EQ(m.card->spp_bar, 2);
  }
  const PciLpt::Match one = PciLpt::match({0x4348, 0x5053, 0x07, 0x80, 0x00});
  ASSERT_NE(one.card, nullptr);
  EXPECT_EQ(one.card->spp_bar, 1);
}

TEST(KernelPciLpt, UnknownSerialOrComboCardIsSkippedNotTaken) {
  const PciLpt::Match serial = PciLpt::match({0x1415, 0x9501, 0x07, 0x00, 0x06});  // an OXuPCI954 UART
  EXPECT_EQ(serial.verdict, Verdict::SkipUnknownCombo);
  EXPECT_EQ(serial.card, nullptr);
  EXPECT_EQ(PciLpt::match({0x1234, 0x5678, 0x07, 0x80, 0x00}).verdict, Verdict::SkipUnknownCombo);
  EXPECT_EQ(PciLpt::match({0x8086, 0x100E, 0x02, 0x00, 0x00}).verdict, Verdict::NotOurs);  // a NIC
  EXPECT_EQ(PciLpt::match({0x1234, 0x5678, 0x07, 0x03, 0x00}).verdict, Verdict::NotOurs);  // a modem
}

TEST(KernelPciLpt, ParallelClassCardsStillGoByTheirInterface) {
  const PciLpt::Match ecp = PciLpt::match({0x9710, 0x9805, 0x07, 0x01, 0x02});
  EXPECT_EQ(ecp.verdict, Verdict::Take);
  EXPECT_EQ(ecp.card, nullptr) << "by class: first I/O BAR, ECR in the second";
  EXPECT_EQ(PciLpt::match({0x9710, 0x9805, 0x07, 0x01, 0x00}).verdict, Verdict::SkipInterface);
}

TEST(KernelPciLpt, KnownCardWithoutItsBarIsRefusedNamingTheCardAndBar) {
  const PciLpt::KnownCard* card = PciLpt::known_card(0x1C00, 0x3050);
  ASSERT_NE(card, nullptr);
  const x86::pci::Bar bars[6] = {io(0xD000, 8), io(0xD100, 4), memory(0xFEB00000, 4096), {}, {}, {}};
  auto r = PciLpt::card_registers(*card, bars);
  ASSERT_FALSE(r);
  EXPECT_EQ(
      std::string(r.error().message),
      "probe=pci-lpt: the WCH CH382L card's BAR 2 is not an assigned I/O BAR below 64 KiB, so its parallel "
      "port cannot be used");
}

TEST(KernelPciLpt, EveryListedCardHasItsBarsInRange) {
  ASSERT_GT(PciLpt::kKnownCardCount, 0u);
  for (size_t i = 0; i < PciLpt::kKnownCardCount; ++i) {
    const PciLpt::KnownCard& card = PciLpt::known_cards()[i];
    EXPECT_LT(card.spp_bar, PciLpt::kBarCount) << card.name;
    EXPECT_TRUE(card.ecr_bar == PciLpt::kNoEcrBar || card.ecr_bar < PciLpt::kBarCount) << card.name;
    EXPECT_EQ(PciLpt::known_card(card.vendor, card.device), &card) << card.name << ": listed twice";
  }
}

}  // namespace
}  // namespace ett::drivers
