// stop_key_filter_test.cpp: keyboard=1's stop key on the host: only a new key press stops the capture, never
// the release or the repeat of the Enter that started it, a break code, a prefix or a controller reply.
#include "drivers/input/stop_key_filter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ett::drivers {
namespace {

// The index of the first byte that stops, or -1.
int first_stop(StopKeyFilter filter, const std::vector<uint8_t>& bytes) {
  for (size_t i = 0; i < bytes.size(); ++i)
    if (filter.is_new_press(bytes[i])) return static_cast<int>(i);
  return -1;
}

TEST(KernelStopKey, HeldEnterRepeatsAndItsReleaseDoNotStop) {
  const StopKeyFilter after_enter(StopKeyFilter::kEnter);
  EXPECT_EQ(first_stop(after_enter, {0x1C, 0x1C, 0x1C, 0x9C}), -1);  // typematic repeat, then release
  EXPECT_EQ(first_stop(after_enter, {0x1C, 0x9C, 0x1E}), 2);         // then A
  EXPECT_EQ(first_stop(after_enter, {0x9C, 0x1C}), 1);               // Enter again after the release: a press
}

TEST(KernelStopKey, KeypadEnterStartedTheCapture) {
  EXPECT_EQ(first_stop(StopKeyFilter(StopKeyFilter::kEnter), {0xE0, 0x1C, 0xE0, 0x9C, 0xE0, 0x48}), 5);  // Up
}

TEST(KernelStopKey, BreakCodesPrefixesAndControllerRepliesNeverStop) {
  EXPECT_EQ(first_stop(StopKeyFilter(), {0x9E, 0xAA, 0xFA, 0xFE, 0xFF, 0x00, 0xE0, 0xE1}), -1);
}

TEST(KernelStopKey, WithoutAStartKeyAnyPressStops) {
  EXPECT_EQ(first_stop(StopKeyFilter(), {0x1C}), 0);
  EXPECT_EQ(first_stop(StopKeyFilter(), {0x9C, 0x39}), 1);  // space
}

TEST(KernelStopKey, ReleaseSeenOnceClearsTheHeldKey) {
  StopKeyFilter filter(StopKeyFilter::kEnter);
  EXPECT_FALSE(filter.is_new_press(0x9C));
  EXPECT_EQ(filter.held_key(), 0);
  EXPECT_TRUE(filter.is_new_press(0x1C));
}

}  // namespace
}  // namespace ett::drivers
