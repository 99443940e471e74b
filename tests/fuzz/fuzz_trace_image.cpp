// fuzz_trace_image.cpp: the trace-disk reader over arbitrary bytes: label, session chain, chunks, recovery.
// Random bytes rarely pass a CRC32C, so when the first byte is odd the rest is taken as an image whose CRCs
// are made right first (label, every sector that starts a session header, every chunk): the fuzzer then
// reaches the checks behind the CRCs (counts, sizes, sequence numbers) instead of stopping at the first
// checksum.
#include <cstddef>
#include <cstring>
#include <vector>

#include "common/fast_crc32c.h"
#include "ett/crc32c.h"
#include "ett/trace_format.h"
#include "fuzz_support.h"
#include "image/trace_image.h"

namespace {

namespace f = ett::format;

void fix_crcs(std::vector<uint8_t>& image) {
  const size_t sectors = image.size() / f::kSectorSize;
  for (size_t lba = 0; lba < sectors; ++lba) {
    uint8_t* sector = image.data() + lba * f::kSectorSize;
    const bool label = lba == 0 && std::memcmp(sector, f::kDiskMagic, sizeof(f::kDiskMagic)) == 0;
    const bool session = std::memcmp(sector, f::kSessionMagic, sizeof(f::kSessionMagic)) == 0;
    if (label || session) {
      const uint32_t crc = ett::crc32c(sector, f::kSectorSize - 4);
      std::memcpy(sector + f::kSectorSize - 4, &crc, sizeof(crc));
    } else if (std::memcmp(sector, f::kChunkMagic, sizeof(f::kChunkMagic)) == 0 &&
               (lba + f::kChunkSectors) * f::kSectorSize <= image.size()) {
      const uint32_t crc =
          ett::host::crc32c_with_zero_field(sector, f::kChunkBytes, offsetof(f::ChunkHeader, crc));
      std::memcpy(sector + offsetof(f::ChunkHeader, crc), &crc, sizeof(crc));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> image(data + 1, data + size);
  if (data[0] & 1) fix_crcs(image);
  const ett::fuzz::MemoryFile file(image.data(), image.size());
  auto opened = ett::host::TraceImage::open(file.path());
  if (!opened) {
    ETT_FUZZ_CHECK(!opened.error().message.empty());
    return 0;
  }
  (void)opened->find_session(std::nullopt);
  for (size_t i = 0; i < opened->sessions().size(); ++i) {
    auto summary = opened->check_session(i);
    auto data_read = opened->read_session(i);
    ETT_FUZZ_CHECK(summary.ok() == data_read.ok());
    if (!data_read) continue;
    const ett::host::SessionSummary& read = data_read->summary;
    ETT_FUZZ_CHECK(read.recovered_events == data_read->events.size());
    ETT_FUZZ_CHECK(read.recovered_events == summary->recovered_events);
    ETT_FUZZ_CHECK(read.health == summary->health);
    ETT_FUZZ_CHECK(!read.describe().empty());
    for (size_t e = 1; e < data_read->events.size(); ++e)
      ETT_FUZZ_CHECK(data_read->events[e - 1].seq < data_read->events[e].seq);
    (void)ett::host::require_usable(file.path(), read);
  }
  return 0;
}
