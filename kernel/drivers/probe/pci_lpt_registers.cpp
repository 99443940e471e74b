// pci_lpt_registers.cpp: which PCI cards hold a parallel port that can do input (by class, or by
// vendor:device from the card list), and which of a card's BARs hold its registers (no hardware: also built
// for the host tests).
#include "drivers/probe/pci_lpt.h"
#include "lib/format.h"

namespace ett::drivers {

namespace {

// The BAR layouts as Linux's parport_pc (wch_ch382l) and parport_serial (wch_ch353_*, wch_ch382_*) tables
// give them; none of these has an ECR BAR there.
constexpr PciLpt::KnownCard kCards[] = {
    {0x1C00, 0x3050, 2, PciLpt::kNoEcrBar, "WCH CH382L"},
    {0x1C00, 0x3250, 2, PciLpt::kNoEcrBar, "WCH CH382 2S1P"},
    {0x4348, 0x5053, 1, PciLpt::kNoEcrBar, "WCH CH353 1S1P"},
    {0x4348, 0x7053, 2, PciLpt::kNoEcrBar, "WCH CH353 2S1P"},
};

constexpr uint64_t kSppPorts = 3;
constexpr uint64_t kIoLimit = 0x10000;

bool usable(const x86::pci::Bar& bar) {
  return bar.is_io && bar.size >= kSppPorts && bar.address != 0 && bar.address + bar.size <= kIoLimit;
}

char g_message[160];  // card_registers()'s refusal (Error holds a static string)

}  // namespace

const size_t PciLpt::kKnownCardCount = sizeof(kCards) / sizeof(kCards[0]);

const PciLpt::KnownCard* PciLpt::known_cards() {
  return kCards;
}

const PciLpt::KnownCard* PciLpt::known_card(uint16_t vendor, uint16_t device) {
  for (const KnownCard& card : kCards)
    if (card.vendor == vendor && card.device == device) return &card;
  return nullptr;
}

PciLpt::Match PciLpt::match(const Identity& id) {
  if (const KnownCard* card = known_card(id.vendor, id.device)) return {Verdict::Take, card};
  if (id.class_code != kClassCommunication) return {Verdict::NotOurs, nullptr};
  if (id.subclass == kSubclassParallel)
    return {can_do_input(id.class_code, id.subclass, id.prog_if) ? Verdict::Take : Verdict::SkipInterface,
            nullptr};
  if (id.subclass == kSubclassSerial || id.subclass == kSubclassOther)
    return {Verdict::SkipUnknownCombo, nullptr};
  return {Verdict::NotOurs, nullptr};
}

Result<PciLpt::Registers> PciLpt::card_registers(const KnownCard& card, const x86::pci::Bar* bars) {
  const bool has_ecr = card.ecr_bar != kNoEcrBar;
  const uint8_t missing = !usable(bars[card.spp_bar])              ? card.spp_bar
                          : has_ecr && !usable(bars[card.ecr_bar]) ? card.ecr_bar
                                                                   : kNoEcrBar;
  if (missing != kNoEcrBar) {
    lib::format(
        g_message, sizeof(g_message),
        "probe=pci-lpt: the %s card's BAR %u is not an assigned I/O BAR below 64 KiB, so its parallel "
        "port cannot be used",
        card.name, missing);
    return fail(g_message);
  }
  Registers chosen{};
  chosen.spp_bar = card.spp_bar;
  chosen.spp_base = static_cast<uint16_t>(bars[card.spp_bar].address);
  if (has_ecr) {
    chosen.ecr_bar = card.ecr_bar;
    chosen.ecr_port = static_cast<uint16_t>(bars[card.ecr_bar].address + kEcrInBar);
  }
  return chosen;
}

bool PciLpt::can_do_input(uint8_t class_code, uint8_t subclass, uint8_t prog_if) {
  if (class_code != kClassCommunication || subclass != kSubclassParallel) return false;
  return prog_if == kBidirectional || prog_if == kEcp || prog_if == kIeee1284;
}

const char* PciLpt::interface_name(uint8_t prog_if) {
  switch (prog_if) {
    case kSpp:
      return "SPP, output only";
    case kBidirectional:
      return "bidirectional";
    case kEcp:
      return "ECP";
    case kIeee1284:
      return "IEEE 1284 controller";
    case kIeee1284Target:
      return "IEEE 1284 target device";
    default:
      return "unknown interface";
  }
}

Result<PciLpt::Registers> PciLpt::choose_registers(const x86::pci::Bar* bars) {
  Registers chosen{};
  bool have_spp = false;
  for (uint8_t index = 0; index < kBarCount; ++index) {
    if (!usable(bars[index])) continue;
    const auto base = static_cast<uint16_t>(bars[index].address);
    if (!have_spp) {
      chosen.spp_bar = index;
      chosen.spp_base = base;
      have_spp = true;
    } else {
      chosen.ecr_bar = index;
      chosen.ecr_port = static_cast<uint16_t>(base + kEcrInBar);
      break;
    }
  }
  if (!have_spp)
    return fail("probe=pci-lpt: the PCI parallel-port card has no usable I/O BAR (assigned, below 64 KiB)");
  return chosen;
}

}  // namespace ett::drivers
