// exceptions.h: CPU exception handlers: a fault becomes a panic that names it, instead of a silent triple
// fault.
#pragma once

namespace ett::x86 {

// Loads an IDT whose 32 exception vectors panic with the vector's name, eip and error code. The kernel never
// enables interrupts, so these are the only gates.
void install_exception_handlers();

}  // namespace ett::x86
