// tsc_math_test.cpp: tick/time conversions used for deadlines and rates (kernel/lib/tsc_math.h).
#include "lib/tsc_math.h"

#include <gtest/gtest.h>

namespace ett::lib {
namespace {

TEST(KernelTscMath, TicksForMs) {
  EXPECT_EQ(ticks_for_ms(1000, 2'500'000'000), 2'500'000'000u);
  EXPECT_EQ(ticks_for_ms(1, 1'193'182), 1193u);
  EXPECT_EQ(ticks_for_ms(3, 1'000'999), 3002u);  // the sub-kHz part is kept
  // The longest limit= at 5 GHz does not overflow.
  EXPECT_EQ(ticks_for_ms(4'294'967'295ull, 5'000'000'000ull), 4'294'967'295ull * 5'000'000ull);
}

TEST(KernelTscMath, UsForTicks) {
  EXPECT_EQ(us_for_ticks(2'500'000'000, 2'500'000'000), 1'000'000u);
  EXPECT_EQ(us_for_ticks(2'500, 2'500'000'000), 1u);
  EXPECT_EQ(us_for_ticks(UINT64_MAX, 3'000'000'000),
            UINT64_MAX / 3'000'000'000 * 1'000'000 + UINT64_MAX % 3'000'000'000 * 1'000'000 / 3'000'000'000);
}

}  // namespace
}  // namespace ett::lib
