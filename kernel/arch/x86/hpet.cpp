// hpet.cpp: HPET capability check and TSC calibration against its main counter.
#include "arch/x86/hpet.h"

#include "arch/x86/counter_calibration.h"

namespace ett::x86 {

Result<Hpet> Hpet::open(uint64_t base) {
  if (base > 0xFFFFF000u)
    return fail("the HPET's registers are above 4 GiB (this kernel runs without paging)");
  auto* registers = reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(base));
  const uint32_t capabilities = registers[kCapabilitiesLow / 4];
  const uint32_t period_fs = registers[kCapabilitiesHigh / 4];
  if (capabilities == 0xFFFFFFFFu) return fail("nothing answers at the HPET's address");
  if (period_fs < kMinPeriodFs || period_fs > kMaxPeriodFs)
    return fail("the HPET reports a period outside 0.1-100 ns (a broken HPET)");
  return Hpet(registers, period_fs, capabilities & kCounterSize64);
}

Result<lib::TscEstimate> Hpet::calibrate_tsc(const CounterTiming& timing) const {
  // 50 ms in counts; the low 32 bits of the counter wrap after 2^32 counts (42 s at 100 MHz).
  const uint32_t window_counts =
      static_cast<uint32_t>(uint64_t{kCounterWindowMs} * 1'000'000'000'000ull / m_period_fs);
  const uint32_t saved = reg(kConfiguration);
  if (!(saved & kEnable)) set_reg(kConfiguration, saved | kEnable);
  auto estimate = calibrate_against_counter(*this, 32, window_counts, timing,
                                            lib::ReferenceRate{1'000'000'000'000'000ull, m_period_fs});
  set_reg(kConfiguration, saved);
  return estimate;
}

}  // namespace ett::x86
