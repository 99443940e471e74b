// fast_crc32c_test.cpp: the host's fast CRC-32C agrees with the shared table implementation.
#include "common/fast_crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ett/crc32c.h"

namespace ett::host {
namespace {

TEST(FastCrc32c, KnownVector) {
  EXPECT_EQ(fast_crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(ett::crc32c("123456789", 9), 0xE3069283u);
}

TEST(FastCrc32c, MatchesTheSharedImplementationAtEverySizeAndAlignment) {
  std::mt19937 random(42);
  std::vector<uint8_t> data(4096 + 16);
  for (auto& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t offset = 0; offset < 9; ++offset)
    for (size_t size : {0, 1, 7, 8, 9, 63, 64, 511, 512, 4096})
      EXPECT_EQ(fast_crc32c(data.data() + offset, size), ett::crc32c(data.data() + offset, size))
          << offset << "+" << size;
  // Continuing over pieces gives the same result as one call.
  uint32_t pieces = fast_crc32c_update(0, data.data(), 100);
  pieces = fast_crc32c_update(pieces, data.data() + 100, 901);
  EXPECT_EQ(pieces, ett::crc32c(data.data(), 1001));
}

TEST(FastCrc32c, ZeroField) {
  std::vector<uint8_t> data(64, 0xAB);
  std::vector<uint8_t> zeroed = data;
  std::fill(zeroed.begin() + 28, zeroed.begin() + 32, 0);
  EXPECT_EQ(crc32c_with_zero_field(data.data(), data.size(), 28), ett::crc32c(zeroed.data(), zeroed.size()));
}

}  // namespace
}  // namespace ett::host
