// ata_identify.h: the few fields of an ATA IDENTIFY DEVICE block the trace disk needs (model, LBA48, size,
// logical sector size), shared by the IDE and AHCI drivers.
#pragma once

#include <stdint.h>

namespace ett::drivers::storage {

struct IdentifyData {
  char model[41];
  bool lba48;
  uint64_t sectors;       // logical sectors; 0: the disk has no LBA addressing
  uint16_t max_multiple;  // most sectors per READ/WRITE MULTIPLE data request (0: none)
  // Bytes per logical sector: 512 unless word 106 is valid (bits 15:14 = 01) and says (bit 12) that words
  // 117-118 hold the words per logical sector; then whatever they say, even a size no driver takes.
  uint32_t logical_sector_bytes;
};

// `words`: the 256 words of IDENTIFY data as the device sent them (little-endian words).
inline IdentifyData parse_identify(const uint16_t* words) {
  enum Word : uint32_t {
    kModel = 27,          // 20 words, bytes swapped in each word
    kMaxMultiple = 47,    // bits 7:0
    kLba28Sectors = 60,   // 2 words
    kCommandSets = 83,    // bit 10: LBA48
    kLba48Sectors = 100,  // 4 words
    kSectorSizes = 106,   // bits 15:14 = 01 when valid; bit 12: the logical sector is longer than 256 words
    kLogicalSectorWords = 117,  // 2 words: words per logical sector, when word 106 bit 12 says so
  };
  constexpr uint16_t kCommandSetLba48 = 1u << 10;
  constexpr uint16_t kSectorSizesValidMask = 0xC000, kSectorSizesValid = 0x4000, kLongLogical = 1u << 12;
  IdentifyData id{};
  for (uint32_t i = 0; i < 20; ++i) {
    id.model[2 * i] = static_cast<char>(words[kModel + i] >> 8);
    id.model[2 * i + 1] = static_cast<char>(words[kModel + i] & 0xFF);
  }
  for (int i = 39; i >= 0 && (id.model[i] == ' ' || id.model[i] == '\0'); --i) id.model[i] = '\0';
  id.lba48 = words[kCommandSets] & kCommandSetLba48;
  if (id.lba48)
    for (int i = 3; i >= 0; --i) id.sectors = (id.sectors << 16) | words[kLba48Sectors + i];
  if (id.sectors == 0) id.sectors = (uint32_t{words[kLba28Sectors + 1]} << 16) | words[kLba28Sectors];
  id.max_multiple = words[kMaxMultiple] & 0xFF;
  id.logical_sector_bytes = 512;
  const uint16_t sizes = words[kSectorSizes];
  if ((sizes & kSectorSizesValidMask) == kSectorSizesValid && (sizes & kLongLogical)) {
    const uint32_t logical_words =
        (uint32_t{words[kLogicalSectorWords + 1]} << 16) | words[kLogicalSectorWords];
    id.logical_sector_bytes = logical_words < 0x80000000u ? 2 * logical_words : 0;
  }
  return id;
}

// The message a driver refuses an unsupported logical sector size with (`prefix`: "ata" or "ahci").
inline constexpr const char* kLogicalSectorRefusal =
    "%s: the disk's logical sectors are %u bytes (IDENTIFY words 106, 117-118); a trace disk needs 512-, "
    "1024-, 2048- or 4096-byte sectors";

}  // namespace ett::drivers::storage
