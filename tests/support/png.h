// png.h: decodes the 8-bit RGB/RGBA PNG screenshots Chromium writes, so that tests can count and compare
// pixels.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace ett::test {

struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3, row by row
};

// nullopt when the file is not an 8-bit, non-interlaced RGB or RGBA PNG.
std::optional<Image> read_png(const std::filesystem::path& path);

// Pixels that are not near-white (any channel below 240).
long non_white_pixels(const Image& image);

// Pixels that differ between two images of the same size (-1 when the sizes differ).
long differing_pixels(const Image& a, const Image& b);

}  // namespace ett::test
