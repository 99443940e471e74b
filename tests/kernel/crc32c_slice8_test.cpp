// crc32c_slice8_test.cpp: the dump's slice-by-8 CRC-32C (kernel/dump/crc32c_slice8.h) gives the values of the
// one shared implementation (ett/crc32c.h) for every length and alignment.
#include "dump/crc32c_slice8.h"

#include <gtest/gtest.h>

#include <vector>

namespace ett::dump {
namespace {

TEST(Crc32cSlice8, MatchesTheSharedCrcForEveryLengthAndAlignment) {
  std::vector<uint8_t> data(4096 + 16);
  uint32_t state = 12345;
  for (auto& byte : data) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<uint8_t>(state >> 24);
  }
  for (size_t offset = 0; offset < 8; ++offset)
    for (size_t size : {0u, 1u, 3u, 7u, 8u, 9u, 15u, 16u, 31u, 64u, 511u, 4096u})
      ASSERT_EQ(crc32c_slice8(data.data() + offset, size), crc32c(data.data() + offset, size))
          << offset << " " << size;
  EXPECT_EQ(crc32c_slice8("123456789", 9), 0xE3069283u);  // the CRC-32C check value
}

}  // namespace
}  // namespace ett::dump
