// png.cpp: a small PNG decoder (zlib inflate and the five row filters) for the browser tests' screenshots.
#include "support/png.h"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace ett::test {

std::optional<Image> read_png(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 8 || data.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return std::nullopt;
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(data[at])) << 24) | (uint32_t(uint8_t(data[at + 1])) << 16) |
           (uint32_t(uint8_t(data[at + 2])) << 8) | uint32_t(uint8_t(data[at + 3]));
  };
  uint32_t width = 0, height = 0, channels = 0;
  std::string idat;
  for (size_t at = 8; at + 8 <= data.size();) {
    const uint32_t length = be32(at);
    const std::string type = data.substr(at + 4, 4);
    if (at + 12 + length > data.size()) return std::nullopt;
    if (type == "IHDR") {
      width = be32(at + 8);
      height = be32(at + 12);
      const int depth = uint8_t(data[at + 16]), color = uint8_t(data[at + 17]),
                interlace = uint8_t(data[at + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return std::nullopt;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += data.substr(at + 8, length);
    }
    at += 12 + length;
  }
  if (!channels || !width || !height) return std::nullopt;
  const size_t stride = size_t(width) * channels;
  std::vector<uint8_t> raw((stride + 1) * height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size())
    return std::nullopt;
  Image image{width, height, {}};
  image.rgb.reserve(size_t(width) * height * 3);
  std::vector<uint8_t> previous(stride, 0), row(stride);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in_row = &raw[y * (stride + 1) + 1];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= channels ? row[x - channels] : 0, b = previous[x],
                c = x >= channels ? previous[x - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          break;
      }
      row[x] = uint8_t(in_row[x] + predictor);
    }
    for (uint32_t x = 0; x < width; ++x)
      image.rgb.insert(image.rgb.end(), &row[x * channels], &row[x * channels] + 3);
    previous = row;
  }
  return image;
}

long non_white_pixels(const Image& image) {
  long count = 0;
  for (size_t i = 0; i + 2 < image.rgb.size(); i += 3)
    if (image.rgb[i] < 240 || image.rgb[i + 1] < 240 || image.rgb[i + 2] < 240) ++count;
  return count;
}

long differing_pixels(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height) return -1;
  long count = 0;
  for (size_t i = 0; i + 2 < a.rgb.size(); i += 3)
    if (a.rgb[i] != b.rgb[i] || a.rgb[i + 1] != b.rgb[i + 1] || a.rgb[i + 2] != b.rgb[i + 2]) ++count;
  return count;
}

}  // namespace ett::test
