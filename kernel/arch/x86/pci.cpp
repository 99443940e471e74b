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
  return find_first([&](Address a) {
    const uint32_t id = read32(a, kVendorId);
    return (id & 0xFFFF) == vendor && (id >> 16) == device;
  });
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

uint32_t quiesce_bus_masters(bool has_in_use, Address in_use, QuiescedDevice* out, uint32_t capacity) {
  uint32_t count = 0;
  for_each_function([&](Address a) {
    if (has_in_use && a.bus == in_use.bus && a.slot == in_use.slot && a.function == in_use.function) return;
    if (keeps_bus_master(read8(a, kClassCode), read8(a, kSubclass))) return;
    const uint16_t command = read16(a, kCommand);
    if (!(command & kBusMaster) || count == capacity) return;
    write16(a, kCommand, static_cast<uint16_t>(command & ~kBusMaster));
    out[count++] = QuiescedDevice{a, command};
  });
  return count;
}

void restore_bus_masters(const QuiescedDevice* devices, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) write16(devices[i].address, kCommand, devices[i].command);
}

namespace {

constexpr uint32_t kMaxBusyRanges = 64;
constexpr uint8_t kHeaderTypeMask = 0x7F;
constexpr uint8_t kBridgeMemoryWindow = 0x20;  // u16 base, u16 limit (bits 31:20 of the addresses)
constexpr uint8_t kBridgePrefetchWindow = 0x24;

struct BusyRanges {
  uint64_t start[kMaxBusyRanges];
  uint64_t end[kMaxBusyRanges];
  uint32_t count;
  void add(uint64_t from, uint64_t size) {
    if (size > 0 && count < kMaxBusyRanges) {
      start[count] = from;
      end[count++] = from + size;
    }
  }
  bool overlaps(uint64_t from, uint64_t to) const {
    for (uint32_t i = 0; i < count; ++i)
      if (from < end[i] && start[i] < to) return true;
    return false;
  }
};

void add_device(Address a, BusyRanges& busy) {
  const uint8_t type = read8(a, kHeaderType) & kHeaderTypeMask;
  const uint8_t bars = type == 0 ? 6 : type == 1 ? 2 : 0;
  for (uint8_t index = 0; index < bars; ++index) {
    auto bar = read_bar(a, index);
    if (!bar) break;
    if (!bar->is_io && bar->address != 0) busy.add(bar->address, bar->size);
    if (bar->is_64bit) ++index;
  }
  if (type == 1) {  // a bridge forwards its windows: nothing of ours may sit inside them
    const uint8_t windows[] = {kBridgeMemoryWindow, kBridgePrefetchWindow};
    for (uint8_t window : windows) {
      const uint32_t value = read32(a, window);
      const uint64_t base = uint64_t{value & 0xFFF0} << 16;
      const uint64_t limit = (uint64_t{value >> 16 & 0xFFF0} << 16) | 0xFFFFF;
      if (limit > base) busy.add(base, limit - base + 1);
    }
  }
}

}  // namespace

Result<uint64_t> find_unused_memory(uint64_t size, uint64_t floor, uint64_t ceiling) {
  BusyRanges busy{};
  for (uint32_t bus = 0; bus < 256; ++bus) {
    for (uint8_t slot = 0; slot < 32; ++slot) {
      const Address first{static_cast<uint8_t>(bus), slot, 0};
      if (read16(first, kVendorId) == kNoDevice) continue;
      const uint8_t functions = (read8(first, kHeaderType) & kHeaderMultiFunction) ? 8 : 1;
      for (uint8_t function = 0; function < functions; ++function) {
        const Address a{static_cast<uint8_t>(bus), slot, function};
        if (read16(a, kVendorId) != kNoDevice) add_device(a, busy);
      }
    }
  }
  if (size == 0 || (size & (size - 1)) != 0) return fail("PCI window size is not a power of two");
  for (uint64_t at = (ceiling - size) & ~(size - 1); at >= floor && at + size <= ceiling; at -= size)
    if (!busy.overlaps(at, at + size)) return at;
  return fail("no free PCI memory range below 4 GiB");
}

void move_bar(Address address, uint8_t index, const Bar& bar, uint64_t new_address) {
  const auto offset = static_cast<uint8_t>(kBar0 + 4 * index);
  const uint32_t flags = read32(address, offset) & ~kBarMemoryAddressMask;
  const uint16_t command = read16(address, kCommand);
  write16(address, kCommand, command & ~kMemorySpace);
  write32(address, offset, static_cast<uint32_t>(new_address) | flags);
  if (bar.is_64bit) write32(address, offset + 4, static_cast<uint32_t>(new_address >> 32));
  write16(address, kCommand, command);
}

}  // namespace ett::x86::pci
