// pci_lpt_registers.cpp: which PCI parallel cards can do input, and which of a card's BARs hold its registers
// (no hardware: also built for the host tests).
#include "drivers/probe/pci_lpt.h"

namespace ett::drivers {

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
  constexpr uint64_t kSppPorts = 3;
  constexpr uint64_t kIoLimit = 0x10000;
  auto usable = [&](const x86::pci::Bar& bar) {
    return bar.is_io && bar.size >= kSppPorts && bar.address != 0 && bar.address + bar.size <= kIoLimit;
  };
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
