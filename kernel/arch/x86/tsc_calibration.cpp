// tsc_calibration.cpp: runs the PIT, PM timer and HPET calibrations in turn; a missing or broken timer only
// leaves its problem in the results. With none working, the CPUID nominal rate is used.
#include "arch/x86/tsc_calibration.h"

#include "arch/x86/counter_calibration.h"
#include "arch/x86/cpu.h"
#include "arch/x86/hpet.h"
#include "arch/x86/identity_memory.h"
#include "arch/x86/io.h"
#include "arch/x86/pit.h"
#include "arch/x86/pm_timer.h"
#include "lib/cpuid_frequency.h"

namespace ett::x86 {

namespace {

class CpuTicks final : public Pit::Ticks {
 public:
  uint64_t now() override { return rdtsc(); }
};

// No TSC runs faster than this: the bound of a wait when the CPU states no nominal rate.
constexpr uint64_t kMaxTscHz = 10'000'000'000ull;

// With the PIT's rate known, a window is late after 4x its length at twice that rate; without it, at 10 GHz
// (faster than any TSC), so that a counter that never moves still ends in a bounded time.
uint64_t window_deadline_ticks(const lib::ReferenceResult& pit) {
  const uint64_t bound_hz = pit.problem ? kMaxTscHz : 2 * pit.estimate.hz;
  return bound_hz / 1000 * kCounterWindowMs * 4;
}

lib::ReferenceResult result_of(const Result<lib::TscEstimate>& estimate) {
  if (!estimate) return lib::ReferenceResult{estimate.error().message, {}};
  return lib::ReferenceResult{nullptr, *estimate};
}

format::TscMethod method_of(lib::Reference reference) {
  switch (reference) {
    case lib::Reference::Hpet:
      return format::TscMethod::Hpet;
    case lib::Reference::PmTimer:
      return format::TscMethod::PmTimer;
    case lib::Reference::Pit:
      break;
  }
  return format::TscMethod::Pit;
}

}  // namespace

Result<TscCalibration> calibrate_tsc(const CpuInfo& cpu, const acpi::LoaderRsdp& loader) {
  TscCalibration out{};
  auto& pit = out.results[static_cast<uint32_t>(lib::Reference::Pit)];
  auto& pm = out.results[static_cast<uint32_t>(lib::Reference::PmTimer)];
  auto& hpet = out.results[static_cast<uint32_t>(lib::Reference::Hpet)];
  const auto nominal = lib::cpuid_tsc_frequency({cpu.family, cpu.model, cpu.tsc_ratio_denominator,
                                                 cpu.tsc_ratio_numerator, cpu.crystal_hz, cpu.base_mhz});
  if (nominal) {
    out.nominal = lib::ReferenceResult{nullptr, nominal->estimate};
    out.nominal_source = nominal->source;
  } else {
    out.nominal.problem = nominal.error().message;
  }
  // The PIT waits at most its round deadline at twice the nominal rate, or at the fastest TSC there is.
  CpuIoPorts ports;
  CpuTicks ticks;
  pit = result_of(Pit::calibrate_tsc(ports, ticks, nominal ? 2 * nominal->estimate.hz : kMaxTscHz));

  const IdentityMemory memory;
  out.timers = acpi::find_timers(memory, loader);
  const CounterTiming timing{window_deadline_ticks(pit), cpu.has_sse2};
  if (out.timers.pm_timer_missing)
    pm.problem = out.timers.pm_timer_missing;
  else
    pm = result_of(PmTimer(out.timers.pm_timer).calibrate_tsc(timing));

  if (out.timers.hpet_missing) {
    hpet.problem = out.timers.hpet_missing;
  } else if (auto opened = Hpet::open(out.timers.hpet_base); !opened) {
    hpet.problem = opened.error().message;
  } else {
    out.hpet_period_fs = opened->period_fs();
    hpet = result_of(opened->calibrate_tsc(timing));
  }

  out.choice = lib::choose_reference(out.results);
  if (!out.choice.found) {
    if (!nominal)
      return fail(
          "no timer to calibrate the TSC against (PIT, ACPI PM timer and HPET all failed) and CPUID states "
          "no TSC frequency");
    out.hz = nominal->estimate.hz;
    out.uncertainty_ppm = nominal->estimate.uncertainty_ppm;
    out.method = format::TscMethod::Cpuid;
    return out;
  }
  out.hz = out.choice.estimate.hz;
  out.uncertainty_ppm = out.choice.estimate.uncertainty_ppm;
  out.method = method_of(out.choice.reference);
  return out;
}

}  // namespace ett::x86
