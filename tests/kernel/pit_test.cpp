// pit_test.cpp: the PIT calibration (kernel/arch/x86/pit) against a register model of channel 2 and port
// 0x61, on a modelled TSC: a PIT that counts gives the TSC's rate; one that never counts (clock-gated) makes
// the calibration fail within its stated deadline instead of polling for seconds.
#include "arch/x86/pit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ett::x86 {
namespace {

// The TSC: every read and every port access moves it on, as they take time on a real machine.
class ModelTsc final : public Pit::Ticks {
 public:
  explicit ModelTsc(uint64_t step) : m_step(step) {}
  uint64_t now() override { return m_now += m_step; }
  void advance(uint64_t ticks) { m_now += ticks; }
  uint64_t value() const { return m_now; }

 private:
  uint64_t m_now = 1'000'000;
  uint64_t m_step;
};

// Channel 2 in mode 0: OUT2 low from the high byte's write until `count` input clocks later. `counts`
// false: the PIT's clock is gated off and OUT2 never rises.
class ModelPit final : public lib::IoPorts {
 public:
  ModelPit(ModelTsc& tsc, uint64_t tsc_hz, bool counts) : m_tsc(tsc), m_tsc_hz(tsc_hz), m_counts(counts) {}

  uint8_t in8(uint16_t port) override {
    m_tsc.advance(kPortTicks);
    ++m_reads;
    if (port != Pit::kPortB) return 0xFF;
    const bool out2 =
        m_counts && m_armed && (m_tsc.value() - m_start) * Pit::kInputHz >= uint64_t{m_count} * m_tsc_hz;
    return static_cast<uint8_t>((m_port_b & 0x0F) | (out2 ? Pit::kOut2 : 0));
  }
  void out8(uint16_t port, uint8_t value) override {
    m_tsc.advance(kPortTicks);
    if (port == Pit::kPortB) m_port_b = value;
    if (port == Pit::kCommand) m_low_next = true, m_armed = false;
    if (port == Pit::kChannel2Data) {
      if (m_low_next) {
        m_count = value;
        m_low_next = false;
      } else {
        m_count |= uint16_t{value} << 8;
        m_armed = true;
        m_start = m_tsc.value();
      }
    }
  }
  uint64_t reads() const { return m_reads; }
  uint8_t port_b() const { return m_port_b; }

 private:
  static constexpr uint64_t kPortTicks = 1500;  // ~0.75 us at 2 GHz, an ISA port read
  ModelTsc& m_tsc;
  uint64_t m_tsc_hz;
  bool m_counts;
  uint8_t m_port_b = 0x0C;
  bool m_low_next = false;
  bool m_armed = false;
  uint16_t m_count = 0;
  uint64_t m_start = 0;
  uint64_t m_reads = 0;
};

constexpr uint64_t kTscHz = 2'000'000'000;
constexpr uint64_t kMaxTscHz = 10'000'000'000ull;
constexpr uint64_t kSlack = 20'000;  // 10 us at 2 GHz

TEST(KernelPit, ACountingPitGivesTheTscRate) {
  ModelTsc tsc(40);
  ModelPit pit(tsc, kTscHz, true);
  auto estimate = Pit::calibrate_tsc(pit, tsc, kMaxTscHz);
  ASSERT_TRUE(estimate) << estimate.error().message;
  const double error = std::abs(double(estimate->hz) - double(kTscHz)) / double(kTscHz) * 1e6;
  EXPECT_LE(error, estimate->uncertainty_ppm + 1.0) << estimate->hz;
  EXPECT_LT(estimate->uncertainty_ppm, 100u);
  EXPECT_EQ(pit.port_b(), 0x0C) << "port 0x61 is restored";
}

TEST(KernelPit, APitThatNeverCountsFailsWithinTheDeadline) {
  ModelTsc tsc(40);
  ModelPit pit(tsc, kTscHz, false);
  const uint64_t start = tsc.value();
  auto estimate = Pit::calibrate_tsc(pit, tsc, kMaxTscHz);
  ASSERT_FALSE(estimate);
  EXPECT_EQ(std::string(estimate.error().message),
            "timed out: PIT channel 2 does not count (clock-gated or absent)");
  // The stated bound: one round's deadline (200 ms at the bound rate), plus the setup's and restore's six
  // port accesses and the last poll (kSlack).
  const uint64_t elapsed = tsc.value() - start;
  EXPECT_LE(elapsed, Pit::round_deadline_ticks(kMaxTscHz) + kSlack);
  EXPECT_GE(elapsed, Pit::round_deadline_ticks(kMaxTscHz));
  EXPECT_EQ(pit.port_b(), 0x0C) << "port 0x61 is restored after the failure";
  // With a nominal rate known (CPUID), the bound is twice that rate's 200 ms: a fifth of the time here.
  ModelTsc tsc2(40);
  ModelPit pit2(tsc2, kTscHz, false);
  ASSERT_FALSE(Pit::calibrate_tsc(pit2, tsc2, 2 * kTscHz));
  EXPECT_LE(tsc2.value() - 1'000'000, Pit::round_deadline_ticks(2 * kTscHz) + kSlack);
  EXPECT_LT(pit2.reads(), pit.reads());
}

TEST(KernelPit, OutputAlreadyHighIsReported) {
  ModelTsc tsc(40);
  ModelPit pit(tsc, /*tsc_hz=*/1, true);  // the count has passed before the first poll
  auto estimate = Pit::calibrate_tsc(pit, tsc, kMaxTscHz);
  ASSERT_FALSE(estimate);
  EXPECT_EQ(std::string(estimate.error().message),
            "PIT channel 2 output was already high after loading the count");
}

}  // namespace
}  // namespace ett::x86
