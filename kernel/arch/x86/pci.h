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

// Reads BAR `index` (and BAR index+1 for a 64-bit memory BAR) and sizes it. Sizing writes all-ones to the
// BAR, so decoding is switched off meanwhile and the command register restored afterwards.
Result<Bar> read_bar(Address address, uint8_t index);

// The highest `size`-aligned range of `size` bytes (a power of two) in [floor, ceiling) that no memory BAR of
// any device decodes: where a 64-bit BAR the firmware put above 4 GiB can move so that this kernel (no paging)
// reaches it. UEFI firmware (OVMF) puts 64-bit BARs above 4 GiB; a BIOS (SeaBIOS) keeps them low.
Result<uint64_t> find_unused_memory(uint64_t size, uint64_t floor, uint64_t ceiling);
// Moves memory BAR `index` (64-bit: with its high half) to `new_address`, decoding off meanwhile.
void move_bar(Address address, uint8_t index, const Bar& bar, uint64_t new_address);

}  // namespace ett::x86::pci
