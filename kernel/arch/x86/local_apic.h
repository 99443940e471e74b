// local_apic.h: puts the other processors into wait-for-SIPI with INIT IPIs sent through this CPU's local
// APIC, so that no core the firmware left running (UEFI parks them in a loop in memory it reserved) touches
// memory or devices during the capture.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "lib/acpi_tables.h"

namespace ett::x86 {

struct ParkedCpus {
  uint32_t cpus;        // processors the MADT lists as enabled (0: no MADT, INIT went to all but this one)
  uint32_t parked;      // those sent INIT (assert, then deassert in xAPIC mode) whose IPIs were delivered
  const char* problem;  // the first AP that could not be sent INIT, or nullptr
};

class LocalApic {
 public:
  // Sends INIT to every other enabled processor of the MADT (one at a time, each IPI's delivery status
  // waited for up to kDeliveryTimeoutMs), or with the all-excluding-self shorthand when there is no MADT.
  // Fails when there is no usable local APIC (none, or disabled in IA32_APIC_BASE).
  static Result<ParkedCpus> park_other_cpus(const acpi::LoaderRsdp& loader, uint64_t tsc_hz);

  static constexpr uint32_t kDeliveryTimeoutMs = 10;

  enum Register : uint32_t {
    kId = 0x20,
    kIcrLow = 0x300,
    kIcrHigh = 0x310,
  };
  enum IcrBit : uint32_t {
    kDeliveryInit = 0b101u << 8,
    kDeliveryPending = 1u << 12,  // delivery status (xAPIC only)
    kLevelAssert = 1u << 14,
    kTriggerLevel = 1u << 15,
    kAllExcludingSelf = 0b11u << 18,
  };
  enum ApicBaseBit : uint64_t {
    kApicBaseX2Apic = 1u << 10,
    kApicBaseEnabled = 1u << 11,
    kApicBaseAddressMask = 0xFFFFF000u,
  };
};

}  // namespace ett::x86
