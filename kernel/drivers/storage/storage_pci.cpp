// storage_pci.cpp: storage controller classification, native IDE ports and the 4 GiB check of memory BARs.
#include "drivers/storage/storage_pci.h"

#include "lib/format.h"

namespace ett::drivers::storage {

namespace {
enum : uint8_t {
  kClassStorage = 0x01,
  kSubclassIde = 0x01,
  kSubclassSata = 0x06,
  kSubclassNvm = 0x08,
  kProgIfAhci = 0x01,
  kProgIfNvme = 0x02,
};
constexpr uint64_t k4GiB = uint64_t{1} << 32;
}  // namespace

ControllerKind classify(uint8_t class_code, uint8_t subclass, uint8_t prog_if) {
  if (class_code != kClassStorage) return ControllerKind::NotStorage;
  if (subclass == kSubclassIde) return ControllerKind::Ide;
  if (subclass == kSubclassSata && prog_if == kProgIfAhci) return ControllerKind::Ahci;
  if (subclass == kSubclassNvm && prog_if == kProgIfNvme) return ControllerKind::Nvme;
  return ControllerKind::OtherStorage;
}

const char* kind_name(ControllerKind kind) {
  switch (kind) {
    case ControllerKind::Ide:
      return "IDE";
    case ControllerKind::Ahci:
      return "AHCI";
    case ControllerKind::Nvme:
      return "NVMe";
    case ControllerKind::OtherStorage:
      return "other storage";
    case ControllerKind::NotStorage:
      break;
  }
  return "not storage";
}

Result<IdeChannelPorts> ide_channel_ports(uint8_t prog_if, uint32_t channel, const x86::pci::Bar& command_bar,
                                          const x86::pci::Bar& control_bar) {
  if (!ide_channel_native(prog_if, channel)) {
    if (channel == 0) return IdeChannelPorts{0x1F0, 0x3F6, false};
    return IdeChannelPorts{0x170, 0x376, false};
  }
  if (!command_bar.is_io || !control_bar.is_io || command_bar.address == 0 || control_bar.address == 0)
    return fail("native-mode IDE channel without I/O BARs (not assigned by the firmware)");
  if (command_bar.size < 8 || control_bar.size < 4)
    return fail("native-mode IDE channel with BARs too small");
  return IdeChannelPorts{static_cast<uint16_t>(command_bar.address),
                         static_cast<uint16_t>(control_bar.address + 2), true};
}

Result<uint32_t> reachable_mmio(const x86::pci::Bar& bar, uint32_t index, uint64_t min_bytes) {
  static char message[256];
  if (bar.is_io) {
    lib::format(message, sizeof(message), "BAR%u is an I/O BAR, a memory BAR was expected", index);
    return fail(message);
  }
  if (bar.address == 0 || bar.size == 0) {
    lib::format(message, sizeof(message), "BAR%u is not assigned (address 0): the firmware left it off",
                index);
    return fail(message);
  }
  if (bar.address >= k4GiB || bar.address + bar.size > k4GiB) {
    lib::format(message, sizeof(message),
                "BAR%u at 0x%llx (%llu KiB) lies above 4 GiB: this 32-bit kernel runs with paging off and "
                "cannot reach it (turn off \"Above 4G decoding\" in the firmware setup)",
                index, static_cast<unsigned long long>(bar.address),
                static_cast<unsigned long long>(bar.size >> 10));
    return fail(message);
  }
  if (bar.size < min_bytes) {
    lib::format(message, sizeof(message), "BAR%u is %llu bytes, smaller than the registers need", index,
                static_cast<unsigned long long>(bar.size));
    return fail(message);
  }
  return static_cast<uint32_t>(bar.address);
}

}  // namespace ett::drivers::storage
