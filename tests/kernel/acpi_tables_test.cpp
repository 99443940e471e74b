// acpi_tables_test.cpp: RSDP search, RSDT/XSDT walk, checksums and the FADT/HPET fields
// (kernel/lib/acpi_tables) on made-up physical memory laid out like a PC's first MiB.
#include "lib/acpi_tables.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace ett::acpi {
namespace {

constexpr uint64_t kMemorySize = 1 << 20;

// The first MiB of a made-up PC; reads past it are refused, as the kernel refuses reads above 4 GiB.
class FakeMemory final : public PhysicalMemory {
 public:
  FakeMemory() : m_bytes(kMemorySize, 0) {}
  const uint8_t* map(uint64_t address, uint32_t length) const override {
    if (address + length > m_bytes.size()) return nullptr;
    return m_bytes.data() + address;
  }
  uint8_t* at(uint64_t address) { return m_bytes.data() + address; }
  void put32(uint64_t address, uint32_t value) { std::memcpy(at(address), &value, 4); }
  void put64(uint64_t address, uint64_t value) { std::memcpy(at(address), &value, 8); }

  // A table: signature, length, then the bytes the caller fills in; `seal` sets its checksum.
  void table(uint64_t address, const char* signature, uint32_t length) {
    std::memset(at(address), 0, length);
    std::memcpy(at(address), signature, 4);
    put32(address + kSdtLength, length);
  }
  void seal(uint64_t address) {
    uint32_t length;
    std::memcpy(&length, at(address + kSdtLength), 4);
    at(address + 9)[0] = 0;
    at(address + 9)[0] = static_cast<uint8_t>(-checksum(at(address), length));
  }
  // An RSDP (revision 0: RSDT only; revision 2: also an XSDT).
  void rsdp(uint64_t address, uint32_t rsdt, uint8_t revision = 0, uint64_t xsdt = 0) {
    std::memset(at(address), 0, kRsdpV2Length);
    std::memcpy(at(address), "RSD PTR ", 8);
    at(address)[kRsdpRevision] = revision;
    put32(address + kRsdpRsdtAddress, rsdt);
    at(address)[8] = static_cast<uint8_t>(-checksum(at(address), kRsdpChecksumLength));
    if (revision >= 2) {
      put32(address + kRsdpLength, kRsdpV2Length);
      put64(address + kRsdpXsdtAddress, xsdt);
      at(address)[32] = static_cast<uint8_t>(-checksum(at(address), kRsdpV2Length));
    }
  }
  // A root table (RSDT: 4-byte entries; XSDT: 8-byte entries) listing `entries`.
  void root(uint64_t address, const char* signature, const std::vector<uint64_t>& entries) {
    const uint32_t size = std::string(signature) == "XSDT" ? 8 : 4;
    table(address, signature, kSdtHeaderLength + size * static_cast<uint32_t>(entries.size()));
    for (size_t i = 0; i < entries.size(); ++i) {
      if (size == 8)
        put64(address + kSdtHeaderLength + 8 * i, entries[i]);
      else
        put32(address + kSdtHeaderLength + 4 * i, static_cast<uint32_t>(entries[i]));
    }
    seal(address);
  }
  // A FADT (ACPI 2.0 size) with PM_TMR_BLK = `port`, PM_TMR_LEN 4, and TMR_VAL_EXT when `extended`.
  void fadt(uint64_t address, uint32_t port, bool extended, uint32_t length = 244) {
    table(address, "FACP", length);
    put32(address + kFadtPmTimerBlock, port);
    at(address)[kFadtPmTimerLength] = 4;
    put32(address + kFadtFlags, extended ? uint32_t{kFadtTimerValueExtended} : 0u);
    seal(address);
  }
  void hpet(uint64_t address, uint64_t base, uint8_t space = kGasSystemMemory) {
    table(address, "HPET", kHpetTableEnd);
    at(address)[kHpetBaseAddress + kGasSpaceId] = space;
    put64(address + kHpetBaseAddress + kGasAddress, base);
    seal(address);
  }

 private:
  std::vector<uint8_t> m_bytes;
};

// What SeaBIOS builds for `qemu-system-i386 -M pc`: RSDP in the BIOS area, RSDT listing FACP, APIC, HPET.
FakeMemory qemu_like() {
  FakeMemory memory;
  memory.rsdp(0xF5A30, 0x80000);
  memory.fadt(0x80100, 0x608, false);
  memory.table(0x80400, "APIC", 120);
  memory.seal(0x80400);
  memory.hpet(0x80500, 0xFED00000);
  memory.root(0x80000, "RSDT", {0x80100, 0x80400, 0x80500});
  return memory;
}

TEST(KernelAcpiTables, ChecksumIsTheByteSumModulo256) {
  const uint8_t bytes[] = {0x10, 0xF0, 0x01, 0xFF};
  EXPECT_EQ(checksum(bytes, 4), 0x00);
  EXPECT_EQ(checksum(bytes, 3), 0x01);
  EXPECT_EQ(checksum(bytes, 0), 0x00);
}

TEST(KernelAcpiTables, FindsThePmTimerAndTheHpetLikeOnQemuPc) {
  const FakeMemory memory = qemu_like();
  auto rsdp = find_rsdp(memory);
  ASSERT_TRUE(rsdp) << rsdp.error().message;
  EXPECT_EQ(rsdp->address, 0xF5A30u);
  EXPECT_EQ(rsdp->rsdt, 0x80000u);
  EXPECT_EQ(rsdp->xsdt, 0u);
  const Timers timers = find_timers(memory);
  ASSERT_EQ(timers.pm_timer_missing, nullptr) << timers.pm_timer_missing;
  EXPECT_EQ(timers.pm_timer.port, 0x608);
  EXPECT_EQ(timers.pm_timer.bits, 24);
  ASSERT_EQ(timers.hpet_missing, nullptr) << timers.hpet_missing;
  EXPECT_EQ(timers.hpet_base, 0xFED00000u);
}

TEST(KernelAcpiTables, TheEbdaIsSearchedFirst) {
  FakeMemory memory = qemu_like();
  memory.fadt(0x81000, 0x408, true);
  memory.root(0x82000, "RSDT", {0x81000});
  memory.at(kEbdaSegmentPointer)[0] = 0xC0;  // EBDA at segment 0x9FC0 = 0x9FC00
  memory.at(kEbdaSegmentPointer)[1] = 0x9F;
  memory.rsdp(0x9FC00 + 0x40, 0x82000);
  auto rsdp = find_rsdp(memory);
  ASSERT_TRUE(rsdp);
  EXPECT_EQ(rsdp->address, 0x9FC40u);
  const Timers timers = find_timers(memory);
  EXPECT_EQ(timers.pm_timer.port, 0x408);
  EXPECT_EQ(timers.pm_timer.bits, 32);  // TMR_VAL_EXT
  EXPECT_STREQ(timers.hpet_missing, "no ACPI \"HPET\" table");
}

TEST(KernelAcpiTables, AnRsdpWithABadChecksumIsSkipped) {
  FakeMemory memory = qemu_like();
  memory.at(0xF5A30 + 12)[0] ^= 1;  // inside the checksummed 20 bytes
  auto missing = find_rsdp(memory);
  ASSERT_FALSE(missing);
  EXPECT_STREQ(missing.error().message, "no ACPI RSDP in the EBDA or at 0xE0000-0xFFFFF");
  const Timers timers = find_timers(memory);
  EXPECT_STREQ(timers.pm_timer_missing, missing.error().message);
  EXPECT_STREQ(timers.hpet_missing, missing.error().message);

  memory.rsdp(0xFFF00, 0x80000);  // a valid one further up is found
  auto found = find_rsdp(memory);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->address, 0xFFF00u);
}

TEST(KernelAcpiTables, ASignatureOffTheSixteenByteGridIsNotAnRsdp) {
  FakeMemory memory;
  memory.rsdp(0xE0008, 0x80000);
  EXPECT_FALSE(find_rsdp(memory));
}

TEST(KernelAcpiTables, ATableWithABadChecksumIsNotUsed) {
  FakeMemory memory = qemu_like();
  memory.at(0x80500 + 50)[0] ^= 0x40;  // damage the HPET table
  const Timers timers = find_timers(memory);
  EXPECT_EQ(timers.pm_timer_missing, nullptr);
  EXPECT_STREQ(timers.hpet_missing, "no ACPI \"HPET\" table");

  memory.at(0x80000 + 40)[0] ^= 0x01;  // damage the RSDT itself
  const Timers none = find_timers(memory);
  EXPECT_STREQ(none.pm_timer_missing, "no ACPI FADT (\"FACP\") table");
}

TEST(KernelAcpiTables, EntriesOutsideMemoryAreSkipped) {
  FakeMemory memory = qemu_like();
  memory.root(0x80000, "RSDT", {0xFFFFFF00, 0x80100, 0x80500});
  const Timers timers = find_timers(memory);
  EXPECT_EQ(timers.pm_timer_missing, nullptr);
  EXPECT_EQ(timers.hpet_missing, nullptr);
}

TEST(KernelAcpiTables, TheXsdtIsPreferredAndADamagedOneFallsBackToTheRsdt) {
  FakeMemory memory = qemu_like();
  memory.fadt(0x83000, 0x1808, false);
  memory.root(0x84000, "XSDT", {0x83000});
  memory.rsdp(0xF5A30, 0x80000, 2, 0x84000);
  auto rsdp = find_rsdp(memory);
  ASSERT_TRUE(rsdp);
  EXPECT_EQ(rsdp->revision, 2);
  EXPECT_EQ(rsdp->xsdt, 0x84000u);
  EXPECT_EQ(find_timers(memory).pm_timer.port, 0x1808);
  // The XSDT lists no HPET: the RSDT's is found.
  EXPECT_EQ(find_timers(memory).hpet_base, 0xFED00000u);

  memory.at(0x84000 + 36)[0] ^= 0x10;
  EXPECT_EQ(find_timers(memory).pm_timer.port, 0x608);
}

TEST(KernelAcpiTables, ADamagedExtendedRsdpStillGivesTheRsdt) {
  FakeMemory memory = qemu_like();
  memory.root(0x84000, "XSDT", {0x80100});
  memory.rsdp(0xF5A30, 0x80000, 2, 0x84000);
  memory.at(0xF5A30 + 24)[0] ^= 0x01;  // XSDT address, covered only by the extended checksum
  auto rsdp = find_rsdp(memory);
  ASSERT_TRUE(rsdp);
  EXPECT_EQ(rsdp->xsdt, 0u);
  EXPECT_EQ(rsdp->rsdt, 0x80000u);
}

TEST(KernelAcpiTables, PmTimerFields) {
  FakeMemory memory;
  memory.fadt(0x1000, 0, false);
  auto none = parse_pm_timer(memory.at(0x1000), 244);
  ASSERT_FALSE(none);
  EXPECT_STREQ(none.error().message, "the FADT lists no PM timer");

  // X_PM_TMR_BLK in system I/O space when PM_TMR_BLK is 0.
  memory.at(0x1000 + kFadtXPmTimerBlock + kGasSpaceId)[0] = kGasSystemIo;
  memory.put64(0x1000 + kFadtXPmTimerBlock + kGasAddress, 0xB008);
  auto extended = parse_pm_timer(memory.at(0x1000), 244);
  ASSERT_TRUE(extended);
  EXPECT_EQ(extended->port, 0xB008);
  // ... but not in memory space, and not in an ACPI 1.0 FADT that ends before it.
  memory.at(0x1000 + kFadtXPmTimerBlock + kGasSpaceId)[0] = kGasSystemMemory;
  EXPECT_FALSE(parse_pm_timer(memory.at(0x1000), 244));
  memory.at(0x1000 + kFadtXPmTimerBlock + kGasSpaceId)[0] = kGasSystemIo;
  EXPECT_FALSE(parse_pm_timer(memory.at(0x1000), 116));

  memory.fadt(0x2000, 0x608, false);
  memory.at(0x2000 + kFadtPmTimerLength)[0] = 2;
  auto short_length = parse_pm_timer(memory.at(0x2000), 244);
  ASSERT_FALSE(short_length);
  EXPECT_STREQ(short_length.error().message, "the FADT's PM_TMR_LEN is not 4");
  EXPECT_FALSE(parse_pm_timer(memory.at(0x2000), 100));  // too short for the flags

  memory.fadt(0x3000, 0x12345, false);
  EXPECT_FALSE(parse_pm_timer(memory.at(0x3000), 244));  // beyond 64 KiB of ports
}

TEST(KernelAcpiTables, HpetFields) {
  FakeMemory memory;
  memory.hpet(0x1000, 0xFED00000);
  auto base = parse_hpet_base(memory.at(0x1000), kHpetTableEnd);
  ASSERT_TRUE(base);
  EXPECT_EQ(*base, 0xFED00000u);
  EXPECT_FALSE(parse_hpet_base(memory.at(0x1000), kHpetTableEnd - 1));
  memory.hpet(0x2000, 0xFED00000, kGasSystemIo);
  auto io = parse_hpet_base(memory.at(0x2000), kHpetTableEnd);
  ASSERT_FALSE(io);
  EXPECT_STREQ(io.error().message, "the HPET table's registers are not in system memory");
  memory.hpet(0x3000, 0);
  EXPECT_FALSE(parse_hpet_base(memory.at(0x3000), kHpetTableEnd));
  memory.hpet(0x4000, 0xFED00010);
  EXPECT_FALSE(parse_hpet_base(memory.at(0x4000), kHpetTableEnd));
}

// An RSDP copy as a multiboot2 ACPI tag carries it (the bytes only, no address of its own).
std::vector<uint8_t> rsdp_copy(FakeMemory& scratch, uint32_t rsdt, uint8_t revision = 0, uint64_t xsdt = 0) {
  scratch.rsdp(0x500, rsdt, revision, xsdt);
  return std::vector<uint8_t>(scratch.at(0x500),
                              scratch.at(0x500) + (revision >= 2 ? uint32_t{kRsdpV2Length} : 20u));
}

TEST(KernelAcpiTables, TheLoadersRsdpCopyIsUsedWithoutAMemorySearch) {
  // A UEFI PC: no RSDP in the EBDA or the BIOS area, the tables elsewhere in RAM.
  FakeMemory memory;
  memory.fadt(0x81000, 0xB008, true);
  memory.hpet(0x82000, 0xFED00000);
  memory.root(0x80000, "XSDT", {0x81000, 0x82000});
  EXPECT_FALSE(find_rsdp(memory));
  FakeMemory scratch;
  const std::vector<uint8_t> copy = rsdp_copy(scratch, 0, 2, 0x80000);
  auto found = locate_rsdp(memory, LoaderRsdp{copy.data(), static_cast<uint32_t>(copy.size())});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_TRUE(found->from_loader);
  EXPECT_EQ(found->rsdp.xsdt, 0x80000u);
  const Timers timers = find_timers(memory, LoaderRsdp{copy.data(), static_cast<uint32_t>(copy.size())});
  EXPECT_STREQ(timers.rsdp_source, "the boot loader");
  ASSERT_EQ(timers.pm_timer_missing, nullptr) << timers.pm_timer_missing;
  EXPECT_EQ(timers.pm_timer.port, 0xB008);
  EXPECT_EQ(timers.hpet_base, 0xFED00000u);
  // Without the copy the same PC has no ACPI at all.
  EXPECT_EQ(find_timers(memory).rsdp_source, nullptr);
}

TEST(KernelAcpiTables, TheLoadersCopyComesBeforeTheBiosAreas) {
  FakeMemory memory;
  memory.fadt(0x81000, 0x608, false);
  memory.root(0x80000, "RSDT", {0x81000});
  memory.fadt(0x91000, 0x1808, false);
  memory.root(0x90000, "RSDT", {0x91000});
  memory.rsdp(0xF0000, 0x90000);  // the BIOS area's RSDP points elsewhere
  FakeMemory scratch;
  const std::vector<uint8_t> copy = rsdp_copy(scratch, 0x80000);
  const Timers timers = find_timers(memory, LoaderRsdp{copy.data(), static_cast<uint32_t>(copy.size())});
  EXPECT_STREQ(timers.rsdp_source, "the boot loader");
  EXPECT_EQ(timers.pm_timer.port, 0x608);
}

TEST(KernelAcpiTables, ADamagedOrShortLoaderCopyFallsBackToTheMemorySearch) {
  FakeMemory memory;
  memory.fadt(0x81000, 0x608, false);
  memory.root(0x80000, "RSDT", {0x81000});
  memory.rsdp(0xE0010, 0x80000);
  FakeMemory scratch;
  std::vector<uint8_t> copy = rsdp_copy(scratch, 0x80000);
  copy[8] ^= 0x55;  // checksum broken
  auto found = locate_rsdp(memory, LoaderRsdp{copy.data(), static_cast<uint32_t>(copy.size())});
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->from_loader);
  EXPECT_EQ(found->rsdp.address, 0xE0010u);
  const std::vector<uint8_t> good = rsdp_copy(scratch, 0x80000);
  auto short_copy = locate_rsdp(memory, LoaderRsdp{good.data(), 12});  // truncated tag
  ASSERT_TRUE(short_copy);
  EXPECT_FALSE(short_copy->from_loader);
  EXPECT_STREQ(find_timers(memory, LoaderRsdp{copy.data(), 20}).rsdp_source, "a memory search");
}

TEST(KernelAcpiTables, The8042FlagOfTheFadt) {
  FakeMemory memory;
  memory.fadt(0x1000, 0x608, false);
  EXPECT_EQ(parse_8042_flag(memory.at(0x1000), 244), Keyboard8042::Unknown);  // revision 0/1: reserved field
  memory.at(0x1000)[kFadtRevision] = 3;
  memory.at(0x1000)[kFadtBootArch] = kBootArchLegacyDevices | kBootArch8042;
  EXPECT_EQ(parse_8042_flag(memory.at(0x1000), 244), Keyboard8042::Present);
  memory.at(0x1000)[kFadtBootArch] = kBootArchLegacyDevices;
  EXPECT_EQ(parse_8042_flag(memory.at(0x1000), 244), Keyboard8042::Absent);
  EXPECT_EQ(parse_8042_flag(memory.at(0x1000), kFadtBootArch + 1), Keyboard8042::Unknown);  // too short

  // Through the table walk, as the kernel reads it.
  memory.fadt(0x81000, 0x608, false);
  memory.at(0x81000)[kFadtRevision] = 3;
  memory.seal(0x81000);
  memory.root(0x80000, "RSDT", {0x81000});
  memory.rsdp(0xE0000, 0x80000);
  EXPECT_EQ(find_timers(memory).keyboard, Keyboard8042::Absent);
  memory.at(0x81000)[kFadtBootArch] = kBootArch8042;
  memory.seal(0x81000);
  EXPECT_EQ(find_timers(memory).keyboard, Keyboard8042::Present);
}

// A MADT as QEMU's `-smp 4` builds it: the local APIC at 0xFEE00000, four enabled processors (APIC IDs 0-3),
// then an I/O APIC and interrupt overrides that are not processors.
std::vector<uint8_t> qemu_madt() {
  std::vector<uint8_t> madt(kMadtEntries, 0);
  std::memcpy(madt.data(), "APIC", 4);
  const uint32_t apic = 0xFEE00000;
  std::memcpy(madt.data() + kMadtLocalApicAddress, &apic, 4);
  for (uint8_t id = 0; id < 4; ++id) madt.insert(madt.end(), {kMadtLocalApic, 8, id, id, 1, 0, 0, 0});
  madt.insert(madt.end(), {1, 12, 0, 0, 0, 0, 0xC0, 0xFE, 0, 0, 0, 0});  // I/O APIC
  madt.insert(madt.end(), {2, 10, 0, 0, 2, 0, 0, 0, 0, 0});              // interrupt source override
  return madt;
}

Result<Madt> parse(const std::vector<uint8_t>& madt) {
  return parse_madt(madt.data(), static_cast<uint32_t>(madt.size()));
}

TEST(KernelAcpiTables, MadtListsTheEnabledProcessors) {
  auto madt = parse(qemu_madt());
  ASSERT_TRUE(madt) << madt.error().message;
  EXPECT_EQ(madt->local_apic_address, 0xFEE00000u);
  ASSERT_EQ(madt->processor_count, 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(madt->apic_ids[i], i);
}

TEST(KernelAcpiTables, MadtSkipsDisabledAndOnlineCapableProcessors) {
  std::vector<uint8_t> bytes = qemu_madt();
  bytes[kMadtEntries + 8 * 1 + 4] = 0;                            // APIC ID 1: disabled
  bytes[kMadtEntries + 8 * 3 + 4] = kMadtProcessorOnlineCapable;  // APIC ID 3: may be hot-added later
  auto madt = parse(bytes);
  ASSERT_TRUE(madt);
  ASSERT_EQ(madt->processor_count, 2u);
  EXPECT_EQ(madt->apic_ids[0], 0u);
  EXPECT_EQ(madt->apic_ids[1], 2u);
}

TEST(KernelAcpiTables, MadtX2ApicEntriesAndTheAddressOverride) {
  std::vector<uint8_t> bytes = qemu_madt();
  // An x2APIC entry for ID 300 (above what an xAPIC entry can hold), one repeating ID 2, and an override.
  bytes.insert(bytes.end(), {kMadtLocalX2Apic, 16, 0, 0, 0x2C, 0x01, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0});
  bytes.insert(bytes.end(), {kMadtLocalX2Apic, 16, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0});
  bytes.insert(bytes.end(), {kMadtLocalApicOverride, 12, 0, 0, 0, 0, 0xD0, 0xFE, 0, 0, 0, 0});
  auto madt = parse(bytes);
  ASSERT_TRUE(madt);
  EXPECT_EQ(madt->local_apic_address, 0xFED00000u);
  ASSERT_EQ(madt->processor_count, 5u);
  EXPECT_EQ(madt->apic_ids[4], 300u);
}

TEST(KernelAcpiTables, MadtWithBrokenEntriesIsRefused) {
  std::vector<uint8_t> bytes = qemu_madt();
  bytes[kMadtEntries + 1] = 0;  // a zero length would loop forever
  EXPECT_FALSE(parse(bytes));
  bytes = qemu_madt();
  bytes.push_back(kMadtLocalApic);  // a lone type byte at the end
  EXPECT_FALSE(parse(bytes));
  bytes = qemu_madt();
  bytes[kMadtEntries + 1] = 200;  // runs past the end
  EXPECT_FALSE(parse(bytes));
  EXPECT_FALSE(parse_madt(qemu_madt().data(), kMadtEntries - 1));
}

TEST(KernelAcpiTables, MadtIsFoundThroughTheRsdt) {
  FakeMemory memory;
  const std::vector<uint8_t> bytes = qemu_madt();
  memory.table(0x82000, "APIC", static_cast<uint32_t>(bytes.size()));
  std::memcpy(memory.at(0x82000) + kSdtHeaderLength, bytes.data() + kSdtHeaderLength,
              bytes.size() - kSdtHeaderLength);
  memory.seal(0x82000);
  memory.root(0x80000, "RSDT", {0x82000});
  memory.rsdp(0xE0000, 0x80000);
  auto madt = find_madt(memory);
  ASSERT_TRUE(madt) << madt.error().message;
  EXPECT_EQ(madt->processor_count, 4u);
  memory.root(0x80000, "RSDT", {});
  ASSERT_FALSE(find_madt(memory));
  EXPECT_STREQ(find_madt(memory).error().message, "no ACPI MADT (\"APIC\") table");
}

}  // namespace
}  // namespace ett::acpi
