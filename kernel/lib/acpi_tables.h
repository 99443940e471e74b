// acpi_tables.h: finds the ACPI tables the TSC calibration needs (RSDP -> RSDT/XSDT -> FADT and HPET) and
// reads the PM timer's port and the HPET's address from them. Hardware-free: it reads physical memory through
// a PhysicalMemory window, which the kernel maps 1:1 and the host tests fill with made-up tables.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::acpi {

// Physical memory as the parser sees it.
class PhysicalMemory {
 public:
  // `length` readable bytes at physical `address`, or nullptr when that range cannot be read.
  virtual const uint8_t* map(uint64_t address, uint32_t length) const = 0;

 protected:
  ~PhysicalMemory() = default;
};

// Byte offsets and constants from the ACPI specification (6.x, section 5.2), named once.
enum RsdpField : uint32_t {
  kRsdpChecksumLength = 20,  // the ACPI 1.0 part, covered by the first checksum
  kRsdpRevision = 15,
  kRsdpRsdtAddress = 16,  // u32
  kRsdpLength = 20,       // u32, revision >= 2: the whole structure, covered by the extended checksum
  kRsdpXsdtAddress = 24,  // u64, revision >= 2
  kRsdpV2Length = 36,
};

enum SdtField : uint32_t {
  kSdtSignature = 0,
  kSdtLength = 4,  // u32, the whole table including this header
  kSdtHeaderLength = 36,
};

enum FadtField : uint32_t {
  kFadtRevision = 8,         // the table header's revision: 1 is ACPI 1.0, whose boot flags are reserved
  kFadtPmTimerBlock = 76,    // u32 PM_TMR_BLK: I/O port of the 4-byte PM timer register (0 = none)
  kFadtPmTimerLength = 91,   // u8 PM_TMR_LEN: 4 when the timer exists
  kFadtBootArch = 109,       // u16 IAPC_BOOT_ARCH (revision >= 2)
  kFadtFlags = 112,          // u32
  kFadtXPmTimerBlock = 208,  // Generic Address Structure, ACPI 2.0+: used when PM_TMR_BLK is 0
  kFadtXPmTimerEnd = 220,
};

enum FadtFlag : uint32_t {
  kFadtTimerValueExtended = 1u << 8,  // TMR_VAL_EXT: the PM timer counts 32 bits, not 24
};

enum FadtBootArchFlag : uint16_t {
  kBootArchLegacyDevices = 1u << 0,
  kBootArch8042 = 1u << 1,  // the board has a keyboard controller at ports 0x60/0x64
};

enum HpetField : uint32_t {
  kHpetBaseAddress = 40,  // Generic Address Structure of the event timer block
  kHpetTableEnd = 56,
};

// Generic Address Structure: space id, bit width, bit offset, access size, then the 64-bit address. Plain
// constants, not an enum: they are added to the offset of the structure inside its table.
constexpr uint32_t kGasSpaceId = 0;
constexpr uint32_t kGasAddress = 4;
enum GasSpace : uint8_t {
  kGasSystemMemory = 0,
  kGasSystemIo = 1,
};

// Where the BIOS may put the RSDP: the first KiB of the EBDA (its segment is the word at 0x40E) and the
// BIOS area 0xE0000-0xFFFFF, on 16-byte boundaries.
constexpr uint64_t kEbdaSegmentPointer = 0x40E;
constexpr uint32_t kEbdaSearchLength = 1024;
constexpr uint64_t kBiosAreaStart = 0xE0000;
constexpr uint32_t kBiosAreaLength = 0x20000;
constexpr uint32_t kPmTimerHz = 3'579'545;      // the ACPI PM timer's rate, fixed by the specification
constexpr uint32_t kMaxTableLength = 1u << 20;  // larger is a corrupt length field, not a table

// The sum of `length` bytes modulo 256: an ACPI structure is valid when the sum over it is 0.
uint8_t checksum(const uint8_t* bytes, uint32_t length);

struct Rsdp {
  uint64_t address;  // where it was found
  uint8_t revision;
  uint64_t rsdt;  // 0 when none
  uint64_t xsdt;  // 0 when none (revision < 2)
};

// Searches the EBDA and the BIOS area for a structure signed "RSD PTR " whose checksum(s) hold.
Result<Rsdp> find_rsdp(const PhysicalMemory& memory);

// The boot loader's copy of the RSDP (multiboot2's ACPI tags): `length` bytes, 0 when the loader gave none.
struct LoaderRsdp {
  const uint8_t* bytes = nullptr;
  uint32_t length = 0;
};

// An RSDP from the loader's copy (its checksums checked; `address` is 0), or one found by the memory search.
// On a UEFI PC the RSDP need not be in the BIOS areas at all: the copy comes first.
struct FoundRsdp {
  Rsdp rsdp;
  bool from_loader;
};
Result<FoundRsdp> locate_rsdp(const PhysicalMemory& memory, const LoaderRsdp& loader);

// The physical address of the first table signed `signature` (4 characters) listed in the XSDT (or, without
// a usable XSDT, the RSDT) whose checksum holds.
Result<uint64_t> find_table(const PhysicalMemory& memory, const Rsdp& rsdp, const char* signature);

struct PmTimerBlock {
  uint16_t port;
  uint8_t bits;  // 24 or 32
};

// The PM timer described by a FADT of `length` bytes: PM_TMR_BLK, or X_PM_TMR_BLK when that is 0.
Result<PmTimerBlock> parse_pm_timer(const uint8_t* fadt, uint32_t length);

// The HPET's register block (system memory) from an "HPET" table of `length` bytes.
Result<uint64_t> parse_hpet_base(const uint8_t* hpet, uint32_t length);

// What the FADT says about a keyboard controller. A revision-1 FADT (ACPI 1.0) has no such flag: Unknown.
enum class Keyboard8042 : uint8_t { Unknown, Present, Absent };
Keyboard8042 parse_8042_flag(const uint8_t* fadt, uint32_t length);

// What the tables say about the two timers. A timer that is not there has a message saying why.
struct Timers {
  const char* pm_timer_missing;  // nullptr when pm_timer is valid
  PmTimerBlock pm_timer;
  const char* hpet_missing;  // nullptr when hpet_base is valid
  uint64_t hpet_base;
  const char* rsdp_source;  // "the boot loader", "a memory search" or nullptr (no RSDP)
  Keyboard8042 keyboard;    // from the FADT (Unknown without one)
};

Timers find_timers(const PhysicalMemory& memory, const LoaderRsdp& loader = {});

// The MADT ("APIC"): the local APIC's address and the processors the firmware lists.
enum MadtField : uint32_t {
  kMadtLocalApicAddress = 36,  // u32
  kMadtFlags = 40,             // u32
  kMadtEntries = 44,           // then entries: u8 type, u8 length, ...
};
enum MadtEntryType : uint8_t {
  kMadtLocalApic = 0,          // u8 processor UID at 2, u8 APIC ID at 3, u32 flags at 4
  kMadtLocalApicOverride = 5,  // u64 local APIC address at 4
  kMadtLocalX2Apic = 9,        // u32 x2APIC ID at 4, u32 flags at 8
};
enum MadtProcessorFlag : uint32_t {
  kMadtProcessorEnabled = 1u << 0,
  kMadtProcessorOnlineCapable = 1u << 1,  // disabled now, may be enabled later: not running
};

constexpr uint32_t kMaxMadtProcessors = 256;

struct Madt {
  uint64_t local_apic_address;            // the override entry's when there is one
  uint32_t processor_count;               // enabled processors listed (may exceed kMaxMadtProcessors)
  uint32_t apic_ids[kMaxMadtProcessors];  // the first kMaxMadtProcessors of them, in table order
};

// The MADT of `length` bytes: the enabled processors' APIC IDs (local APIC and x2APIC entries alike; an
// x2APIC entry repeating an ID already listed is not counted twice). Fails on a short table or an entry
// whose length runs past the end or is under 2.
Result<Madt> parse_madt(const uint8_t* madt, uint32_t length);

// The MADT found through the RSDP (the loader's copy first).
Result<Madt> find_madt(const PhysicalMemory& memory, const LoaderRsdp& loader = {});

}  // namespace ett::acpi
