// pci.cpp: configuration mechanism #1 accesses, the bus scan, and BAR decoding.
#include "arch/x86/pci.h"

#include "arch/x86/io.h"

namespace ett::x86::pci {

namespace {

enum Port : uint16_t {
  kConfigAddress = 0xCF8,
  kConfigData = 0xCFC,
};
constexpr uint32_t kEnable = 1u << 31;

void select(Address a, uint8_t offset) {
  out32(kConfigAddress, kEnable | (uint32_t{a.bus} << 16) | (uint32_t{a.slot} << 11) |
                            (uint32_t{a.function} << 8) | (offset & 0xFC));
}

}  // namespace

uint32_t read32(Address address, uint8_t offset) {
  select(address, offset);
  return in32(kConfigData);
}

uint16_t read16(Address address, uint8_t offset) {
  return static_cast<uint16_t>(read32(address, offset) >> ((offset & 2) * 8));
}

uint8_t read8(Address address, uint8_t offset) {
  return static_cast<uint8_t>(read32(address, offset) >> ((offset & 3) * 8));
}

void write32(Address address, uint8_t offset, uint32_t value) {
  select(address, offset);
  out32(kConfigData, value);
}

void write16(Address address, uint8_t offset, uint16_t value) {
  select(address, offset);
  out16(static_cast<uint16_t>(kConfigData + (offset & 2)), value);
}

Result<Address> find_class(uint8_t class_code, uint8_t subclass) {
  return find_first(
      [&](Address a) { return read8(a, kClassCode) == class_code && read8(a, kSubclass) == subclass; });
}

Result<Address> find_device(uint16_t vendor, uint16_t device) {
  for (uint32_t bus = 0; bus < 256; ++bus) {
    for (uint8_t slot = 0; slot < 32; ++slot) {
      const Address first{static_cast<uint8_t>(bus), slot, 0};
      if (read16(first, kVendorId) == kNoDevice) continue;
      const uint8_t functions = (read8(first, kHeaderType) & kHeaderMultiFunction) ? 8 : 1;
      for (uint8_t function = 0; function < functions; ++function) {
        const Address a{static_cast<uint8_t>(bus), slot, function};
        const uint32_t id = read32(a, kVendorId);
        if ((id & 0xFFFF) == vendor && (id >> 16) == device) return a;
      }
    }
  }
  return fail("PCI device not found");
}

Result<Bar> read_bar(Address address, uint8_t index) {
  if (index > 5) return fail("PCI BAR index out of range");
  const auto offset = static_cast<uint8_t>(kBar0 + 4 * index);
  BarProbe probe{};
  probe.low = read32(address, offset);
  const bool is_64bit = !(probe.low & kBarIo) && (probe.low & kBarTypeMask) == kBarType64;
  if (is_64bit && index == 5) return fail("PCI 64-bit BAR in the last BAR slot");
  probe.high = is_64bit ? read32(address, offset + 4) : 0;

  const uint16_t command = read16(address, kCommand);
  write16(address, kCommand, command & ~(kIoSpace | kMemorySpace));
  write32(address, offset, 0xFFFFFFFF);
  probe.size_low = read32(address, offset);
  probe.size_high = 0xFFFFFFFF;
  if (is_64bit) {
    write32(address, offset + 4, 0xFFFFFFFF);
    probe.size_high = read32(address, offset + 4);
    write32(address, offset + 4, probe.high);
  }
  write32(address, offset, probe.low);
  write16(address, kCommand, command);
  return decode_bar(probe);
}

void enable(Address address, bool memory, bool io, bool bus_master) {
  uint16_t command = read16(address, kCommand) | kInterruptDisable;
  if (memory) command |= kMemorySpace;
  if (io) command |= kIoSpace;
  if (bus_master) command |= kBusMaster;
  write16(address, kCommand, command);
}

}  // namespace ett::x86::pci
