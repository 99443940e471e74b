// acpi_tables.cpp: RSDP search, RSDT/XSDT walk with checksums, and the FADT/HPET fields the calibration uses.
#include "lib/acpi_tables.h"

namespace ett::acpi {

namespace {

// Tables are byte-packed and may sit at any address: assemble little-endian values byte by byte.
uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t le64(const uint8_t* p) {
  return uint64_t{le32(p)} | uint64_t{le32(p + 4)} << 32;
}

bool same_signature(const uint8_t* bytes, const char* signature, uint32_t length) {
  for (uint32_t i = 0; i < length; ++i)
    if (bytes[i] != static_cast<uint8_t>(signature[i])) return false;
  return true;
}

constexpr char kRsdpSignature[] = "RSD PTR ";

// An RSDP at `address` whose checksums hold; `address` is 0 for the loader's copy.
bool read_rsdp(const PhysicalMemory& memory, uint64_t address, Rsdp& out) {
  const uint8_t* p = memory.map(address, kRsdpChecksumLength);
  if (!p || !same_signature(p, kRsdpSignature, 8) || checksum(p, kRsdpChecksumLength) != 0) return false;
  out = Rsdp{address, p[kRsdpRevision], le32(p + kRsdpRsdtAddress), 0};
  if (out.revision >= 2) {
    const uint8_t* v2 = memory.map(address, kRsdpV2Length);
    // A revision-2 RSDP whose extended part is unreadable or damaged still has a valid ACPI 1.0 part: use the
    // RSDT.
    if (v2) {
      const uint32_t length = le32(v2 + kRsdpLength);
      const uint8_t* whole =
          length >= kRsdpV2Length && length <= 4096 ? memory.map(address, length) : nullptr;
      if (whole && checksum(whole, length) == 0) out.xsdt = le64(v2 + kRsdpXsdtAddress);
    }
  }
  return true;
}

bool search_rsdp(const PhysicalMemory& memory, uint64_t start, uint32_t length, Rsdp& out) {
  for (uint32_t offset = 0; offset + kRsdpChecksumLength <= length; offset += 16)
    if (read_rsdp(memory, start + offset, out)) return true;
  return false;
}

// A whole system description table at `address` with a sane length and a valid checksum, or nullptr.
const uint8_t* map_table(const PhysicalMemory& memory, uint64_t address, uint32_t& length) {
  const uint8_t* header = memory.map(address, kSdtHeaderLength);
  if (!header) return nullptr;
  length = le32(header + kSdtLength);
  if (length < kSdtHeaderLength || length > kMaxTableLength) return nullptr;
  const uint8_t* table = memory.map(address, length);
  return table && checksum(table, length) == 0 ? table : nullptr;
}

// Walks a root table (RSDT: 4-byte entries, XSDT: 8-byte entries) for `signature`.
Result<uint64_t> search_root(const PhysicalMemory& memory, const uint8_t* root, uint32_t length,
                             uint32_t entry_size, const char* signature) {
  for (uint32_t offset = kSdtHeaderLength; offset + entry_size <= length; offset += entry_size) {
    const uint64_t address = entry_size == 8 ? le64(root + offset) : le32(root + offset);
    uint32_t table_length = 0;
    const uint8_t* table = map_table(memory, address, table_length);
    if (table && same_signature(table, signature, 4)) return address;
  }
  return fail("not listed (or its checksum is wrong)");
}

}  // namespace

uint8_t checksum(const uint8_t* bytes, uint32_t length) {
  uint8_t sum = 0;
  for (uint32_t i = 0; i < length; ++i) sum = static_cast<uint8_t>(sum + bytes[i]);
  return sum;
}

Result<Rsdp> find_rsdp(const PhysicalMemory& memory) {
  Rsdp rsdp{};
  if (const uint8_t* pointer = memory.map(kEbdaSegmentPointer, 2)) {
    const uint64_t ebda = uint64_t{static_cast<uint16_t>(pointer[0] | pointer[1] << 8)} << 4;
    // Zero or above 640 KiB is not an EBDA (some loaders leave the word unset).
    if (ebda >= 0x400 && ebda < 0xA0000 && search_rsdp(memory, ebda, kEbdaSearchLength, rsdp)) return rsdp;
  }
  if (search_rsdp(memory, kBiosAreaStart, kBiosAreaLength, rsdp)) return rsdp;
  return fail("no ACPI RSDP in the EBDA or at 0xE0000-0xFFFFF");
}

namespace {

// The loader's copy seen through the PhysicalMemory interface, at address 0, so that read_rsdp checks it the
// same way as one found in memory.
class CopyMemory final : public PhysicalMemory {
 public:
  explicit CopyMemory(const LoaderRsdp& copy) : m_copy(copy) {}
  const uint8_t* map(uint64_t address, uint32_t length) const override {
    return address + length <= m_copy.length ? m_copy.bytes + address : nullptr;
  }

 private:
  LoaderRsdp m_copy;
};

}  // namespace

Result<FoundRsdp> locate_rsdp(const PhysicalMemory& memory, const LoaderRsdp& loader) {
  Rsdp rsdp{};
  if (loader.bytes && loader.length > 0 && read_rsdp(CopyMemory(loader), 0, rsdp))
    return FoundRsdp{rsdp, true};
  auto found = find_rsdp(memory);
  if (!found) return found.failure();
  return FoundRsdp{*found, false};
}

Result<uint64_t> find_table(const PhysicalMemory& memory, const Rsdp& rsdp, const char* signature) {
  uint32_t length = 0;
  if (rsdp.xsdt) {
    const uint8_t* xsdt = map_table(memory, rsdp.xsdt, length);
    if (xsdt && same_signature(xsdt, "XSDT", 4)) {
      auto found = search_root(memory, xsdt, length, 8, signature);
      if (found) return found;
    }
  }
  const uint8_t* rsdt = rsdp.rsdt ? map_table(memory, rsdp.rsdt, length) : nullptr;
  if (!rsdt || !same_signature(rsdt, "RSDT", 4)) return fail("no valid RSDT or XSDT");
  return search_root(memory, rsdt, length, 4, signature);
}

Result<PmTimerBlock> parse_pm_timer(const uint8_t* fadt, uint32_t length) {
  if (length <= kFadtFlags + 3) return fail("the FADT is too short to describe a PM timer");
  const uint8_t bits = (le32(fadt + kFadtFlags) & kFadtTimerValueExtended) ? 32 : 24;
  uint64_t port = le32(fadt + kFadtPmTimerBlock);
  if (port != 0 && fadt[kFadtPmTimerLength] != 4) return fail("the FADT's PM_TMR_LEN is not 4");
  if (port == 0 && length >= kFadtXPmTimerEnd && fadt[kFadtXPmTimerBlock + kGasSpaceId] == kGasSystemIo)
    port = le64(fadt + kFadtXPmTimerBlock + kGasAddress);
  if (port == 0) return fail("the FADT lists no PM timer");
  if (port > 0xFFFC) return fail("the FADT's PM timer port is outside the I/O space");
  return PmTimerBlock{static_cast<uint16_t>(port), bits};
}

Keyboard8042 parse_8042_flag(const uint8_t* fadt, uint32_t length) {
  if (length < kFadtBootArch + 2 || fadt[kFadtRevision] < 2) return Keyboard8042::Unknown;
  const uint16_t flags = static_cast<uint16_t>(fadt[kFadtBootArch] | fadt[kFadtBootArch + 1] << 8);
  return (flags & kBootArch8042) ? Keyboard8042::Present : Keyboard8042::Absent;
}

Result<uint64_t> parse_hpet_base(const uint8_t* hpet, uint32_t length) {
  if (length < kHpetTableEnd) return fail("the HPET table is too short");
  if (hpet[kHpetBaseAddress + kGasSpaceId] != kGasSystemMemory)
    return fail("the HPET table's registers are not in system memory");
  const uint64_t base = le64(hpet + kHpetBaseAddress + kGasAddress);
  if (base == 0 || (base & 0x3FF) != 0)
    return fail("the HPET table's register address is 0 or not 1 KiB aligned");
  return base;
}

namespace {

// The table signed `signature`, parsed by `parse` into `out`; nullptr, or the message saying why not.
template <typename T, typename Parse>
const char* read_table(const PhysicalMemory& memory, const Rsdp& rsdp, const char* signature,
                       const char* missing, Parse parse, T& out) {
  auto address = find_table(memory, rsdp, signature);
  if (!address) return missing;
  uint32_t length = 0;
  const uint8_t* table = map_table(memory, *address, length);  // sets length: not in the same expression
  if (!table) return missing;
  auto parsed = parse(table, length);
  if (!parsed) return parsed.error().message;
  out = *parsed;
  return nullptr;
}

}  // namespace

Timers find_timers(const PhysicalMemory& memory, const LoaderRsdp& loader) {
  Timers timers{};
  auto found = locate_rsdp(memory, loader);
  if (!found) {
    timers.pm_timer_missing = timers.hpet_missing = found.error().message;
    return timers;
  }
  const Rsdp& rsdp = found->rsdp;
  timers.rsdp_source = found->from_loader ? "the boot loader" : "a memory search";
  timers.pm_timer_missing =
      read_table(memory, rsdp, "FACP", "no ACPI FADT (\"FACP\") table", parse_pm_timer, timers.pm_timer);
  timers.hpet_missing =
      read_table(memory, rsdp, "HPET", "no ACPI \"HPET\" table", parse_hpet_base, timers.hpet_base);
  auto keyboard = [](const uint8_t* fadt, uint32_t length) -> Result<Keyboard8042> {
    return parse_8042_flag(fadt, length);
  };
  read_table(memory, rsdp, "FACP", "", keyboard, timers.keyboard);
  return timers;
}

Result<Madt> parse_madt(const uint8_t* madt, uint32_t length) {
  if (length < kMadtEntries) return fail("the MADT is too short");
  Madt out{};
  out.local_apic_address = le32(madt + kMadtLocalApicAddress);
  auto add = [&out](uint32_t apic_id) {
    const uint32_t known =
        out.processor_count < kMaxMadtProcessors ? out.processor_count : kMaxMadtProcessors;
    for (uint32_t i = 0; i < known; ++i)
      if (out.apic_ids[i] == apic_id) return;
    if (out.processor_count < kMaxMadtProcessors) out.apic_ids[out.processor_count] = apic_id;
    ++out.processor_count;
  };
  for (uint32_t offset = kMadtEntries; offset < length;) {
    if (length - offset < 2) return fail("the MADT ends inside an entry header");
    const uint8_t type = madt[offset];
    const uint8_t entry_length = madt[offset + 1];
    if (entry_length < 2 || entry_length > length - offset) return fail("a MADT entry's length is wrong");
    const uint8_t* entry = madt + offset;
    if (type == kMadtLocalApic && entry_length >= 8) {
      if (le32(entry + 4) & kMadtProcessorEnabled) add(entry[3]);
    } else if (type == kMadtLocalX2Apic && entry_length >= 16) {
      if (le32(entry + 8) & kMadtProcessorEnabled) add(le32(entry + 4));
    } else if (type == kMadtLocalApicOverride && entry_length >= 12) {
      out.local_apic_address = le64(entry + 4);
    }
    offset += entry_length;
  }
  return out;
}

Result<Madt> find_madt(const PhysicalMemory& memory, const LoaderRsdp& loader) {
  auto found = locate_rsdp(memory, loader);
  if (!found) return found.failure();
  Madt madt{};
  if (const char* missing =
          read_table(memory, found->rsdp, "APIC", "no ACPI MADT (\"APIC\") table", parse_madt, madt))
    return fail(missing);
  return madt;
}

}  // namespace ett::acpi
