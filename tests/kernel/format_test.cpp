// format_test.cpp: the console's printf-style formatter (kernel/lib/format).
#include "lib/format.h"

#include <gtest/gtest.h>

#include <string>

namespace ett::lib {
namespace {

template <typename... Args>
std::string fmt(const char* format_string, Args... args) {
  char buffer[256];
  const size_t length = format(buffer, sizeof(buffer), format_string, args...);
  EXPECT_EQ(length, std::string(buffer).size());
  return buffer;
}

TEST(KernelFormat, PlainText) {
  EXPECT_EQ(fmt("hello"), "hello");
  EXPECT_EQ(fmt(""), "");
  EXPECT_EQ(fmt("100%%"), "100%");
}

TEST(KernelFormat, Strings) {
  EXPECT_EQ(fmt("[%s]", "abc"), "[abc]");
  EXPECT_EQ(fmt("[%5s]", "abc"), "[  abc]");
  EXPECT_EQ(fmt("[%-5s]", "abc"), "[abc  ]");
  EXPECT_EQ(fmt("[%.2s]", "abc"), "[ab]");
  EXPECT_EQ(fmt("[%.*s]", 1, "abc"), "[a]");
  EXPECT_EQ(fmt("[%.*s]", 5, "abc"), "[abc]");
  EXPECT_EQ(fmt("[%s]", static_cast<const char*>(nullptr)), "[(null)]");
  EXPECT_EQ(fmt("[%05s]", "ab"), "[   ab]");  // zero-padding is for numbers
}

TEST(KernelFormat, Characters) {
  EXPECT_EQ(fmt("%c%c", 'o', 'k'), "ok");
  EXPECT_EQ(fmt("[%3c]", 'x'), "[  x]");
}

TEST(KernelFormat, SignedDecimal) {
  EXPECT_EQ(fmt("%d", 0), "0");
  EXPECT_EQ(fmt("%d", 42), "42");
  EXPECT_EQ(fmt("%d", -42), "-42");
  EXPECT_EQ(fmt("%i", -2147483647 - 1), "-2147483648");
  EXPECT_EQ(fmt("[%5d]", -42), "[  -42]");
  EXPECT_EQ(fmt("[%05d]", -42), "[-0042]");
  EXPECT_EQ(fmt("[%-5d]", 42), "[42   ]");
  EXPECT_EQ(fmt("%lld", -9223372036854775807LL - 1), "-9223372036854775808");
  EXPECT_EQ(fmt("%ld", -5L), "-5");
}

TEST(KernelFormat, UnsignedAndHex) {
  EXPECT_EQ(fmt("%u", 4294967295u), "4294967295");
  EXPECT_EQ(fmt("%x", 0xBEEFu), "beef");
  EXPECT_EQ(fmt("%X", 0xBEEFu), "BEEF");
  EXPECT_EQ(fmt("%08x", 0x1F0u), "000001f0");
  EXPECT_EQ(fmt("%02x", 0x5u), "05");
  EXPECT_EQ(fmt("%02x", 0x1234u), "1234");  // a width never truncates
  EXPECT_EQ(fmt("%llu", 18446744073709551615ULL), "18446744073709551615");
  EXPECT_EQ(fmt("%llx", 0xFEDCBA9876543210ULL), "fedcba9876543210");
  EXPECT_EQ(fmt("%016llx", 0xABCULL), "0000000000000abc");
  EXPECT_EQ(fmt("%zu", size_t{123}), "123");
  EXPECT_EQ(fmt("%lu", 7UL), "7");
}

TEST(KernelFormat, StarWidth) {
  EXPECT_EQ(fmt("[%*d]", 4, 7), "[   7]");
  EXPECT_EQ(fmt("[%*d]", -4, 7), "[7   ]");
}

TEST(KernelFormat, Mixed) {
  EXPECT_EQ(fmt("ETT: RESULT OK events=%llu session=%u", 1234ULL, 2u),
            "ETT: RESULT OK events=1234 session=2");
  EXPECT_EQ(fmt("%s=%d,%s=%x", "a", 1, "b", 255u), "a=1,b=ff");
}

TEST(KernelFormat, UnknownConversionIsCopied) {
  char buffer[32];
  const char* spec = "%q";  // not a literal, so the compiler's format check lets it through
  format(buffer, sizeof(buffer), spec);
  EXPECT_STREQ(buffer, "%q");
  const char* trailing = "abc%";
  format(buffer, sizeof(buffer), trailing);
  EXPECT_STREQ(buffer, "abc%");
}

TEST(KernelFormat, TruncatesAndReportsTheFullLength) {
  char buffer[8];
  EXPECT_EQ(format(buffer, sizeof(buffer), "%s", "0123456789"), 10u);
  EXPECT_STREQ(buffer, "0123456");
  EXPECT_EQ(format(buffer, sizeof(buffer), "%llu", 123456789012ULL), 12u);
  EXPECT_STREQ(buffer, "1234567");
  char one[1] = {'x'};
  EXPECT_EQ(format(one, 1, "abc"), 3u);
  EXPECT_EQ(one[0], '\0');
  EXPECT_EQ(format(nullptr, 0, "abc"), 3u);
}

}  // namespace
}  // namespace ett::lib
