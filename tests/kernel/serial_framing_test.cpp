// serial_framing_test.cpp: the ETTX line (kernel/include/ett/serial_framing.h) as the kernel writes it and
// the host reads it back.
#include "ett/serial_framing.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ett::serial {
namespace {

std::string encode(uint64_t lba, uint32_t offset, const uint8_t* bytes) {
  char line[kMaxLineLength];
  const size_t length = encode_line(line, lba, offset, bytes);
  return std::string(line, length);
}

TEST(KernelSerialFraming, LineRoundTrips) {
  uint8_t bytes[kBytesPerLine];
  for (uint32_t i = 0; i < kBytesPerLine; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 5);
  const std::string line = encode(0x1234567890ull, 0x1c0, bytes);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.rfind("ETTX 1234567890 1c0 ", 0), 0u) << line;
  Line decoded;
  ASSERT_TRUE(decode_line(line.data(), line.size() - 1, decoded));
  EXPECT_EQ(decoded.lba, 0x1234567890ull);
  EXPECT_EQ(decoded.offset, 0x1c0u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(decoded.data), kBytesPerLine),
            std::string(reinterpret_cast<char*>(bytes), kBytesPerLine));
}

TEST(KernelSerialFraming, CrcIsEightDigitsOverTheTextBeforeIt) {
  const uint8_t zeros[kBytesPerLine] = {};
  const std::string line = encode(0, 0, zeros);
  const std::string body = line.substr(0, line.size() - 10);
  char expected[9];
  std::snprintf(expected, sizeof(expected), "%08x", crc32c(body.data(), body.size()));
  EXPECT_EQ(line.substr(line.size() - 9, 8), expected);
}

TEST(KernelSerialFraming, EveryChangedCharacterIsRefused) {
  uint8_t bytes[kBytesPerLine];
  for (uint32_t i = 0; i < kBytesPerLine; ++i) bytes[i] = static_cast<uint8_t>(255 - i);
  const std::string line = encode(8, 0x40, bytes);
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    std::string damaged = line;
    damaged[i] = damaged[i] == 'a' ? 'b' : 'a';
    Line decoded;
    EXPECT_FALSE(decode_line(damaged.data(), damaged.size() - 1, decoded)) << "character " << i;
  }
}

TEST(KernelSerialFraming, OffsetsOutsideASectorOrOffTheGridAreRefused) {
  const uint8_t zeros[kBytesPerLine] = {};
  Line decoded;
  for (uint32_t offset : {0x200u, 0x41u}) {
    const std::string line = encode(1, offset, zeros);
    EXPECT_FALSE(decode_line(line.data(), line.size() - 1, decoded)) << offset;
  }
  const std::string good = encode(1, 0x1c0, zeros);
  EXPECT_TRUE(decode_line(good.data(), good.size() - 1, decoded));
  EXPECT_FALSE(decode_line(good.data(), 4, decoded));
  EXPECT_FALSE(decode_line("ETTX 1 0 00 00000000", 20, decoded));
}

}  // namespace
}  // namespace ett::serial
