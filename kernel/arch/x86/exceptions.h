// exceptions.h: CPU exception handlers: a fault becomes a panic that names it, instead of a silent triple
// fault.
#pragma once

#include <stdint.h>

#include "ett/result.h"

namespace ett::x86 {

// Loads an IDT whose 32 exception vectors panic with the vector's name, eip and error code. The kernel never
// enables interrupts, so these are the only gates.
void install_exception_handlers();

// RDMSR whose #GP (an MSR this CPU does not have) is caught by the #GP handler, which resumes after the
// instruction: the fault comes back as an error instead of a panic. Needs install_exception_handlers().
Result<uint64_t> read_msr_safe(uint32_t msr);

}  // namespace ett::x86
