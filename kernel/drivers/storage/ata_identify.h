// ata_identify.h: the few fields of an ATA IDENTIFY DEVICE block the trace disk needs (model, LBA48, size),
// shared by the IDE and AHCI drivers.
#pragma once

#include <stdint.h>

namespace ett::drivers::storage {

struct IdentifyData {
  char model[41];
  bool lba48;
  uint64_t sectors;       // 0: the disk has no LBA addressing
  uint16_t max_multiple;  // most sectors per READ/WRITE MULTIPLE data request (0: none)
};

// `words`: the 256 words of IDENTIFY data as the device sent them (little-endian words).
inline IdentifyData parse_identify(const uint16_t* words) {
  enum Word : uint32_t {
    kModel = 27,          // 20 words, bytes swapped in each word
    kMaxMultiple = 47,    // bits 7:0
    kLba28Sectors = 60,   // 2 words
    kCommandSets = 83,    // bit 10: LBA48
    kLba48Sectors = 100,  // 4 words
  };
  constexpr uint16_t kCommandSetLba48 = 1u << 10;
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
  return id;
}

}  // namespace ett::drivers::storage
