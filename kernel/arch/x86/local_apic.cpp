// local_apic.cpp: INIT IPIs through the xAPIC's memory-mapped ICR or the x2APIC's ICR MSR.
#include "arch/x86/local_apic.h"

#include "arch/x86/cpu.h"
#include "arch/x86/exceptions.h"
#include "arch/x86/identity_memory.h"

namespace ett::x86 {

namespace {

// No paging: the local APIC's registers are at their physical address.
class ApicWindow {
 public:
  ApicWindow(uint32_t base, bool x2apic, uint64_t timeout_ticks)
      : m_base(base), m_x2apic(x2apic), m_timeout_ticks(timeout_ticks) {}

  uint32_t self_id() const {
    if (m_x2apic) {
      auto id = read_msr_safe(kMsrX2ApicId);
      return id ? static_cast<uint32_t>(*id) : 0;
    }
    return read(LocalApic::kId) >> 24;
  }

  // One IPI: `destination` is ignored with a shorthand in `command`.
  Status send(uint32_t destination, uint32_t command) const {
    if (m_x2apic) {  // the write is the delivery: the x2APIC has no delivery status to wait for
      wrmsr(kMsrX2ApicIcr, uint64_t{destination} << 32 | command);
      return {};
    }
    if (destination > 0xFF) return fail("an APIC ID above 255 needs x2APIC mode");
    write(LocalApic::kIcrHigh, destination << 24);
    write(LocalApic::kIcrLow, command);
    const uint64_t start = rdtsc();
    while (read(LocalApic::kIcrLow) & LocalApic::kDeliveryPending)
      if (rdtsc() - start > m_timeout_ticks)
        return fail("the local APIC did not deliver an INIT IPI in 10 ms");
    return {};
  }

 private:
  uint32_t read(LocalApic::Register reg) const {
    return *reinterpret_cast<volatile const uint32_t*>(static_cast<uintptr_t>(m_base + reg));
  }
  void write(LocalApic::Register reg, uint32_t value) const {
    *reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(m_base + reg)) = value;
  }

  uint32_t m_base;
  bool m_x2apic;
  uint64_t m_timeout_ticks;
};

// INIT assert, then (xAPIC: older APICs need it to leave the INIT state) INIT deassert.
Status send_init(const ApicWindow& apic, bool x2apic, uint32_t destination, uint32_t shorthand) {
  ETT_TRY(apic.send(destination, shorthand | LocalApic::kDeliveryInit | LocalApic::kTriggerLevel |
                                     LocalApic::kLevelAssert));
  if (x2apic) return {};  // level-deassert INIT is not supported in x2APIC mode
  return apic.send(destination, shorthand | LocalApic::kDeliveryInit | LocalApic::kTriggerLevel);
}

}  // namespace

Result<ParkedCpus> LocalApic::park_other_cpus(const acpi::LoaderRsdp& loader, uint64_t tsc_hz) {
  if (!(cpuid(kCpuidFeatures).edx & kFeatureApic)) return fail("this CPU has no local APIC");
  auto apic_base = read_msr_safe(kMsrApicBase);
  if (!apic_base) return fail("IA32_APIC_BASE cannot be read");
  if (!(*apic_base & kApicBaseEnabled)) return fail("the local APIC is disabled (IA32_APIC_BASE bit 11)");
  const bool x2apic = *apic_base & kApicBaseX2Apic;
  if (!x2apic && (*apic_base >> 32) != 0) return fail("the local APIC lies above 4 GiB");
  const ApicWindow apic(static_cast<uint32_t>(*apic_base & kApicBaseAddressMask), x2apic,
                        tsc_hz / 1000 * kDeliveryTimeoutMs);

  const IdentityMemory memory;
  auto madt = acpi::find_madt(memory, loader);
  ParkedCpus out{};
  if (!madt) {
    const Status sent = send_init(apic, x2apic, 0, kAllExcludingSelf);
    out.problem =
        sent ? "no ACPI MADT: INIT sent to all other processors at once (not counted)" : sent.error().message;
    return out;
  }
  const uint32_t self = apic.self_id();
  out.cpus = madt->processor_count;
  const uint32_t listed = out.cpus < acpi::kMaxMadtProcessors ? out.cpus : acpi::kMaxMadtProcessors;
  for (uint32_t i = 0; i < listed; ++i) {
    if (madt->apic_ids[i] == self) continue;
    const Status sent = send_init(apic, x2apic, madt->apic_ids[i], 0);
    if (!sent) {
      if (!out.problem) out.problem = sent.error().message;
      continue;
    }
    ++out.parked;
  }
  return out;
}

}  // namespace ett::x86
