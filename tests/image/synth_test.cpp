// synth_test.cpp: a synthetic capture with a clock a few ppm off holds the same events, each stamped by
// the faster or slower clock.
#include "image/synth.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ett::host {
namespace {

TEST(Synth, ClockPpmStampsTheSameEventsWithAFasterOrSlowerClock) {
  const SynthCapture plain = synth_capture({20'000, 7, format::Layout::Double2x4});
  for (double ppm : {50.0, -120.0}) {
    SynthOptions options{20'000, 7, format::Layout::Double2x4};
    options.clock_ppm = ppm;
    const SynthCapture skewed = synth_capture(options);
    ASSERT_EQ(skewed.records.size(), plain.records.size());
    EXPECT_EQ(skewed.tsc_hz, plain.tsc_hz) << "calibrated to the same rate";
    EXPECT_EQ(skewed.capture_start_tsc, plain.capture_start_tsc);
    const uint64_t start = plain.capture_start_tsc;
    for (size_t i = 0; i < plain.records.size(); ++i) {
      const format::EventRecord& a = plain.records[i];
      const format::EventRecord& b = skewed.records[i];
      ASSERT_EQ(b.probe, a.probe) << i;
      ASSERT_EQ(b.code, a.code) << i;
      ASSERT_EQ(b.lines, a.lines) << i;
      const double expected = static_cast<double>(a.tsc - start) * (1 + ppm / 1e6);
      ASSERT_LE(std::fabs(static_cast<double>(b.tsc - start) - expected), 0.5 + 1e-6) << i;
    }
    // The last event, about half a second in: the clocks are ppm apart there, not rounding noise.
    const double span = static_cast<double>(plain.records.back().tsc - start);
    EXPECT_NEAR(
        static_cast<double>(skewed.records.back().tsc) - static_cast<double>(plain.records.back().tsc),
        span * ppm / 1e6, 1.0);
    EXPECT_GT(std::fabs(span * ppm / 1e6), 1000.0) << "too short a capture to tell the clocks apart";
  }
}

}  // namespace
}  // namespace ett::host
