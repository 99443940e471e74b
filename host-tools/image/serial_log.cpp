// serial_log.cpp: ETTX lines -> sectors: each line's CRC32C is checked, later lines for a place win.
#include "image/serial_log.h"

#include <fmt/format.h>

#include "common/resources.h"
#include "ett/serial_framing.h"
#include "ett/trace_format.h"

namespace ett::host {

namespace {

constexpr std::string_view kPrefix(serial::kLinePrefix, serial::kLinePrefixLength);
constexpr uint64_t kMaxLba = (64ull << 30) / format::kSectorSize;  // a log describes at most 64 GiB

}  // namespace

bool looks_like_serial_log(std::string_view text) {
  return text.starts_with(kPrefix) || text.find("\n" + std::string(kPrefix)) != std::string_view::npos;
}

Expected<SerialLogImage> decode_serial_log(std::string_view text, const std::string& path) {
  SerialLogImage image;
  // The image is built in memory: a line whose sector lies beyond what this machine may hold (its CRC can be
  // right while its LBA is far out) is refused before anything that size is made.
  const uint64_t budget = memory_budget_bytes();
  size_t start = 0;
  size_t number = 0;
  while (start < text.size()) {
    ++number;
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.starts_with(kPrefix)) continue;
    serial::Line parsed;
    if (!serial::decode_line(line.data(), line.size(), parsed) || parsed.lba >= kMaxLba) {
      ++image.bad_lines;
      continue;
    }
    const uint64_t at = parsed.lba * format::kSectorSize + parsed.offset;
    const uint64_t needed = (parsed.lba + 1) * format::kSectorSize;
    if (image.bytes.size() < needed) {
      if (budget != 0 && needed > budget)
        return make_error(
            ErrorKind::Usage,
            fmt::format("{}:{}: an ETTX line for sector {} makes a {} image; at most {} may be "
                        "held in memory here",
                        path, number, parsed.lba, byte_size_text(needed), byte_size_text(budget)));
      image.bytes.resize(needed, 0);
    }
    std::copy(parsed.data, parsed.data + serial::kBytesPerLine,
              image.bytes.begin() + static_cast<ptrdiff_t>(at));
    ++image.good_lines;
  }
  if (image.good_lines == 0)
    return make_error(ErrorKind::NotTraceDisk,
                      fmt::format("{}: not a trace disk, and no valid ETTX line of a dump=serial log ({} "
                                  "damaged)",
                                  path, image.bad_lines));
  return image;
}

}  // namespace ett::host
