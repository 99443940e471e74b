// pci.h: PCI configuration space through configuration mechanism #1 (ports 0xCF8/0xCFC), device scan, BARs.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::x86::pci {

struct Address {
  uint8_t bus;
  uint8_t slot;
  uint8_t function;
};

// Standard type-0 header registers.
enum Register : uint8_t {
  kVendorId = 0x00,
  kDeviceId = 0x02,
  kCommand = 0x04,
  kProgIf = 0x09,
  kSubclass = 0x0A,
  kClassCode = 0x0B,
  kHeaderType = 0x0E,
  kBar0 = 0x10,
};

enum CommandBit : uint16_t {
  kIoSpace = 1u << 0,
  kMemorySpace = 1u << 1,
  kBusMaster = 1u << 2,
  kInterruptDisable = 1u << 10,  // INTx off: the kernel polls
};

enum BarBit : uint32_t {
  kBarIo = 1u << 0,
  kBarType64 = 0b10u << 1,  // memory BAR type field (bits 2:1) == 2: 64-bit, the next BAR is the high half
  kBarTypeMask = 0b11u << 1,
  kBarPrefetchable = 1u << 3,
};

inline constexpr uint32_t kBarMemoryAddressMask = ~0xFu;
inline constexpr uint32_t kBarIoAddressMask = ~0x3u;
inline constexpr uint8_t kHeaderMultiFunction = 0x80;
inline constexpr uint16_t kNoDevice = 0xFFFF;

uint32_t read32(Address address, uint8_t offset);
uint16_t read16(Address address, uint8_t offset);
uint8_t read8(Address address, uint8_t offset);
void write32(Address address, uint8_t offset, uint32_t value);
void write16(Address address, uint8_t offset, uint16_t value);

// Calls match(address) for every present function in bus/slot/function order; the first for which it
// returns true.
template <typename Match>
Result<Address> find_first(Match match) {
  for (uint32_t bus = 0; bus < 256; ++bus) {
    for (uint8_t slot = 0; slot < 32; ++slot) {
      const Address first{static_cast<uint8_t>(bus), slot, 0};
      if (read16(first, kVendorId) == kNoDevice) continue;
      const uint8_t functions = (read8(first, kHeaderType) & kHeaderMultiFunction) ? 8 : 1;
      for (uint8_t function = 0; function < functions; ++function) {
        const Address a{static_cast<uint8_t>(bus), slot, function};
        if (read16(a, kVendorId) != kNoDevice && match(a)) return a;
      }
    }
  }
  return fail("PCI device not found");
}

// Scans every bus, slot and function; the first match in bus/slot/function order.
Result<Address> find_device(uint16_t vendor, uint16_t device);
// The same scan by class and subclass (e.g. 0x07/0x01: parallel port).
Result<Address> find_class(uint8_t class_code, uint8_t subclass);

struct Bar {
  uint64_t address;  // flags masked off
  uint64_t size;     // decoded size in bytes, 0 if the BAR is unimplemented
  bool is_io;
  bool is_64bit;
  bool prefetchable;
};

// What one BAR (and its upper half, for a 64-bit memory BAR) read before and after all-ones were written to
// it: everything decode_bar needs.
struct BarProbe {
  uint32_t low;
  uint32_t high;       // the next BAR's value when `low` says 64-bit, else 0
  uint32_t size_low;   // read back after writing all-ones
  uint32_t size_high;  // the same for the upper half (0xFFFFFFFF for a 32-bit BAR)
};

// Decodes address, size and type from a probe (no hardware access: unit-tested on the host).
constexpr Bar decode_bar(const BarProbe& probe) {
  Bar bar{};
  bar.is_io = probe.low & kBarIo;
  bar.is_64bit = !bar.is_io && (probe.low & kBarTypeMask) == kBarType64;
  bar.prefetchable = !bar.is_io && (probe.low & kBarPrefetchable);
  const uint32_t high = bar.is_64bit ? probe.high : 0;
  bar.address = bar.is_io ? (probe.low & kBarIoAddressMask)
                          : ((uint64_t{high} << 32) | (probe.low & kBarMemoryAddressMask));
  if (bar.is_io) {
    const uint32_t mask = probe.size_low & kBarIoAddressMask;
    bar.size = mask == 0 ? 0 : (~mask + 1) & 0xFFFF;  // I/O BARs decode 16 bits at most
  } else {
    const uint32_t size_high = bar.is_64bit ? probe.size_high : 0xFFFFFFFF;
    const uint64_t mask = (uint64_t{size_high} << 32) | (probe.size_low & kBarMemoryAddressMask);
    bar.size = (probe.size_low & kBarMemoryAddressMask) == 0 && !bar.is_64bit ? 0 : ~mask + 1;
  }
  return bar;
}

// Reads BAR `index` (and BAR index+1 for a 64-bit memory BAR) and sizes it. Sizing writes all-ones to the
// BAR, so decoding is switched off meanwhile and the command register restored afterwards.
Result<Bar> read_bar(Address address, uint8_t index);

// Turns on the decoding a driver needs (memory and/or I/O space), bus mastering when the device does DMA,
// and turns INTx off.
void enable(Address address, bool memory, bool io, bool bus_master);

// Whether bus mastering is left on while the capture runs, by class: bridges (their bus-master bit gates the
// DMA of everything behind them), display controllers (the screen), mass storage (the trace disk's
// controller is one) and USB controllers (the firmware's legacy keyboard emulation runs through them until
// a driver takes them over). Any other device the firmware left bus-mastering (a NIC with PXE's rings, an
// audio codec) is stopped. Hardware-free: unit-tested on the host.
enum ClassCode : uint8_t {
  kClassMassStorage = 0x01,
  kClassDisplay = 0x03,
  kClassBridge = 0x06,
  kClassSerialBus = 0x0C,
};
inline constexpr uint8_t kSubclassUsb = 0x03;
constexpr bool keeps_bus_master(uint8_t class_code, uint8_t subclass) {
  return class_code == kClassBridge || class_code == kClassDisplay || class_code == kClassMassStorage ||
         (class_code == kClassSerialBus && subclass == kSubclassUsb);
}

// One device whose bus mastering was turned off, to be turned back on.
struct QuiescedDevice {
  Address address;
  uint16_t command;  // its command register before
};

// Turns bus mastering off on every function keeps_bus_master() does not keep and that is not `in_use` (the
// probe card; has_in_use false: none). Records each in `out` (up to `capacity`; a device that does not fit is
// left bus-mastering) and returns how many. restore_bus_masters() puts the command registers back.
uint32_t quiesce_bus_masters(bool has_in_use, Address in_use, QuiescedDevice* out, uint32_t capacity);
void restore_bus_masters(const QuiescedDevice* devices, uint32_t count);

// Calls visit(address) for every present function, in bus/slot/function order.
template <typename Visit>
void for_each_function(Visit visit) {
  for (uint32_t bus = 0; bus < 256; ++bus) {
    for (uint8_t slot = 0; slot < 32; ++slot) {
      const Address first{static_cast<uint8_t>(bus), slot, 0};
      if (read16(first, kVendorId) == kNoDevice) continue;
      const uint8_t functions = (read8(first, kHeaderType) & kHeaderMultiFunction) ? 8 : 1;
      for (uint8_t function = 0; function < functions; ++function) {
        const Address a{static_cast<uint8_t>(bus), slot, function};
        if (read16(a, kVendorId) != kNoDevice) visit(a);
      }
    }
  }
}

// The highest `size`-aligned range of `size` bytes (a power of two) in [floor, ceiling) that no memory BAR of
// any device decodes: where a 64-bit BAR the firmware put above 4 GiB can move so that this kernel (no
// paging) reaches it. UEFI firmware (OVMF) puts 64-bit BARs above 4 GiB; a BIOS (SeaBIOS) keeps them low.
Result<uint64_t> find_unused_memory(uint64_t size, uint64_t floor, uint64_t ceiling);
// Moves memory BAR `index` (64-bit: with its high half) to `new_address`, decoding off meanwhile.
void move_bar(Address address, uint8_t index, const Bar& bar, uint64_t new_address);

}  // namespace ett::x86::pci
