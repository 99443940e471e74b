// runtime.h: the freestanding C++ runtime's entry points that kernel_main calls.
#pragma once

namespace ett::runtime {

// Runs the constructors of global objects (the .init_array the linker script bounds).
void run_global_constructors();

}  // namespace ett::runtime
