// hpet.h: the High Precision Event Timer's main counter (MMIO at the address of the ACPI "HPET" table), used
// only to calibrate the TSC. The kernel runs without paging: the register block is read at its physical
// address.
#pragma once

#include <stdint.h>

#include "arch/x86/counter_calibration.h"
#include "ett/result.h"
#include "lib/tsc_reference.h"

namespace ett::x86 {

class Hpet {
 public:
  // Checks the capabilities register (a plausible period) at `base`.
  static Result<Hpet> open(uint64_t base);

  // Starts the main counter if the firmware left it halted, runs the best of five 50 ms windows, and puts the
  // configuration register back as it was. `timing` bounds each window and says whether to fence the TSC
  // reads.
  Result<lib::TscEstimate> calibrate_tsc(const CounterTiming& timing) const;
  uint32_t read() const { return reg(kMainCounterLow); }
  uint32_t period_fs() const { return m_period_fs; }
  bool counter_64bit() const { return m_counter_64bit; }

 private:
  enum Register : uint32_t {
    kCapabilitiesLow = 0x000,   // revision, timer count, COUNT_SIZE_CAP, legacy route, vendor
    kCapabilitiesHigh = 0x004,  // COUNTER_CLK_PERIOD in femtoseconds
    kConfiguration = 0x010,
    kMainCounterLow = 0x0F0,
  };
  enum CapabilityBit : uint32_t {
    kCounterSize64 = 1u << 13,
  };
  enum ConfigurationBit : uint32_t {
    kEnable = 1u << 0,  // ENABLE_CNF: the main counter runs
  };
  // The specification bounds the period to at most 100 ns; below 0.1 ns (a 10 GHz counter) is a broken
  // register, and would overflow a 50 ms window's 32-bit count.
  static constexpr uint32_t kMaxPeriodFs = 100'000'000;
  static constexpr uint32_t kMinPeriodFs = 100'000;

  Hpet(volatile uint32_t* registers, uint32_t period_fs, bool counter_64bit)
      : m_registers(registers), m_period_fs(period_fs), m_counter_64bit(counter_64bit) {}
  uint32_t reg(Register r) const { return m_registers[r / 4]; }
  void set_reg(Register r, uint32_t value) const { m_registers[r / 4] = value; }

  volatile uint32_t* m_registers;
  uint32_t m_period_fs;
  bool m_counter_64bit;
};

}  // namespace ett::x86
