// pm_timer.h: the ACPI power-management timer, a free-running 3.579545 MHz counter (24 or 32 bits) at the I/O
// port the FADT names; used only to calibrate the TSC.
#pragma once

#include <stdint.h>

#include "arch/x86/counter_calibration.h"
#include "ett/result.h"
#include "lib/acpi_tables.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

class PmTimer {
 public:
  explicit PmTimer(acpi::PmTimerBlock block) : m_block(block) {}

  // Best of five 50 ms windows; `timing` bounds each window (a timer that does not count) and says whether to
  // fence the TSC reads.
  Result<lib::TscEstimate> calibrate_tsc(const CounterTiming& timing) const;
  uint32_t read() const;

  static constexpr lib::ReferenceRate kRate{acpi::kPmTimerHz, 1};

 private:
  acpi::PmTimerBlock m_block;
};

}  // namespace ett::x86
