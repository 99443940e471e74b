// storage_pci.h: what the trace disk search reads from a storage controller's PCI header: which driver it
// needs, where a native-mode IDE channel's ports are, and whether a memory BAR is reachable by this kernel.
// No hardware access: unit-tested on the host.
#pragma once

#include <stdint.h>

#include "arch/x86/pci.h"
#include "ett/result.h"

namespace ett::drivers::storage {

enum class ControllerKind : uint8_t { Ide, Ahci, Nvme, OtherStorage, NotStorage };

// Class 01 (mass storage): subclass 01 IDE, 06/01 AHCI, 08/02 NVMe; other storage (RAID, SCSI, SATA in IDE
// or vendor mode) is named but not driven.
ControllerKind classify(uint8_t class_code, uint8_t subclass, uint8_t prog_if);
const char* kind_name(ControllerKind kind);

// An IDE channel's command block and control block (its alternate-status register) ports.
struct IdeChannelPorts {
  uint16_t command;
  uint16_t control;
  bool native;  // from the controller's BARs; otherwise the legacy ports (0x1F0/0x3F6, 0x170/0x376)
};

// Programming interface bit 0 (primary) / bit 2 (secondary): the channel runs in native mode, its ports in
// BAR0/BAR1 (primary) or BAR2/BAR3 (secondary); the control BAR's register block starts 2 bytes in.
constexpr bool ide_channel_native(uint8_t prog_if, uint32_t channel) {
  return prog_if & (channel == 0 ? 0x01 : 0x04);
}
// `command_bar`/`control_bar`: the channel's two BARs (read only when the channel is native).
Result<IdeChannelPorts> ide_channel_ports(uint8_t prog_if, uint32_t channel, const x86::pci::Bar& command_bar,
                                          const x86::pci::Bar& control_bar);

// A memory BAR this kernel can use: decoded, at least `min_bytes`, and wholly below 4 GiB (the kernel runs in
// 32-bit mode with paging off). The refusal names the BAR, its address and what to change in the firmware.
Result<uint32_t> reachable_mmio(const x86::pci::Bar& bar, uint32_t index, uint64_t min_bytes);

}  // namespace ett::drivers::storage
