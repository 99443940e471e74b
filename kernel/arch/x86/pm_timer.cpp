// pm_timer.cpp: reads the ACPI PM timer through its 32-bit port and calibrates the TSC against it.
#include "arch/x86/pm_timer.h"

#include "arch/x86/counter_calibration.h"
#include "arch/x86/io.h"

namespace ett::x86 {

uint32_t PmTimer::read() const {
  const uint32_t value = in32(m_block.port);
  return m_block.bits >= 32 ? value : value & ((1u << m_block.bits) - 1);
}

Result<lib::TscEstimate> PmTimer::calibrate_tsc(const CounterTiming& timing) const {
  // 50 ms is 178,977 counts: well inside the 24-bit counter's 4.7 s wrap.
  constexpr uint32_t kWindowCounts = acpi::kPmTimerHz / 1000 * kCounterWindowMs;
  return calibrate_against_counter(*this, m_block.bits, kWindowCounts, timing, kRate);
}

}  // namespace ett::x86
