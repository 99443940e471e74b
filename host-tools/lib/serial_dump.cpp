// serial_dump.cpp: ETTX lines -> sectors: each line's CRC32C is checked, later lines for a place win.
#include "serial_dump.h"

#include <fmt/format.h>

#include <charconv>

#include "ett/crc32c.h"
#include "ett/trace_format.h"

namespace ett::host {

namespace {

constexpr std::string_view kPrefix = "ETTX ";
constexpr size_t kBytesPerLine = 64;
constexpr uint64_t kMaxLba = (64ull << 30) / format::kSectorSize;  // a log describes at most 64 GiB

bool parse_hex(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 16) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return error == std::errc() && end == text.data() + text.size();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

struct Line {
  uint64_t lba = 0;
  uint64_t offset = 0;
  uint8_t data[kBytesPerLine] = {};
};

// "ETTX <lba> <offset> <128 hex> <crc>", checked.
bool parse_line(std::string_view line, Line& out) {
  const size_t crc_space = line.rfind(' ');
  if (crc_space == std::string_view::npos || line.size() - crc_space - 1 != 8) return false;
  uint64_t crc = 0;
  if (!parse_hex(line.substr(crc_space + 1), crc)) return false;
  const std::string_view body = line.substr(0, crc_space);
  if (ett::crc32c(body.data(), body.size()) != crc) return false;
  std::string_view rest = body.substr(kPrefix.size());
  const size_t first = rest.find(' ');
  if (first == std::string_view::npos) return false;
  const size_t second = rest.find(' ', first + 1);
  if (second == std::string_view::npos) return false;
  if (!parse_hex(rest.substr(0, first), out.lba) ||
      !parse_hex(rest.substr(first + 1, second - first - 1), out.offset))
    return false;
  const std::string_view hex = rest.substr(second + 1);
  if (hex.size() != 2 * kBytesPerLine || out.offset % kBytesPerLine != 0 || out.offset >= format::kSectorSize ||
      out.lba >= kMaxLba)
    return false;
  for (size_t i = 0; i < kBytesPerLine; ++i) {
    const int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out.data[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return true;
}

}  // namespace

bool looks_like_serial_log(std::string_view text) {
  return text.starts_with(kPrefix) || text.find("\n" + std::string(kPrefix)) != std::string_view::npos;
}

Expected<SerialLogImage> decode_serial_log(std::string_view text, const std::string& path) {
  SerialLogImage image;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.starts_with(kPrefix)) continue;
    Line parsed;
    if (!parse_line(line, parsed)) {
      ++image.bad_lines;
      continue;
    }
    const uint64_t at = parsed.lba * format::kSectorSize + parsed.offset;
    if (image.bytes.size() < (parsed.lba + 1) * format::kSectorSize)
      image.bytes.resize((parsed.lba + 1) * format::kSectorSize, 0);
    std::copy(parsed.data, parsed.data + kBytesPerLine, image.bytes.begin() + static_cast<ptrdiff_t>(at));
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
