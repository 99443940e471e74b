// buffer_window.h: the x86-64 kernel's capture buffer as one virtual range: every free piece of RAM (below
// and above 4 GiB), mapped one after another with 2 MiB pages from kBufferWindowBase.
//
// The capture loop then stores through one pointer and checks one end pointer, as in the i686 kernel: the
// pieces cost nothing on its idle step or its store path. The map is built before the capture (PML4 entry 1;
// boot/multiboot64.S's identity map is entry 0) and never changed while the loop runs; everything that reads
// the events (dump, serial, analysis screen) reads them through the same addresses.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lib/memory_map.h"

namespace ett::x86 {

#ifdef __x86_64__
inline constexpr uint64_t kBufferWindowBase = 0x8000000000;  // 512 GiB: PML4 entry 1
inline constexpr uint64_t kBufferPageBytes = 2u << 20;       // 2 MiB pages: pieces are 2 MiB aligned
inline constexpr size_t kBufferWindowDirectories = 128;      // page directories in .bss: 128 GiB of buffer

// Maps `pieces` (2 MiB aligned, ascending) one after another from kBufferWindowBase and returns the bytes
// mapped: all of them, or the first 128 GiB. Replaces any earlier window.
uint64_t map_buffer_window(const lib::PhysRange* pieces, size_t count);

// Whether the window maps what map_buffer_window was given: a marker written through the window at the first
// and the last 8 bytes of each piece reads back through the identity map (pieces beyond it are not checked).
// Returns the number of the first piece that fails, 0 when all pass.
size_t check_buffer_window(const lib::PhysRange* pieces, size_t count, uint64_t mapped_bytes);

// The first address past boot/multiboot64.S's identity map (64 GiB with 2 MiB pages, 512 GiB with 1 GiB
// pages): MMIO and ACPI tables below it are reachable through their physical address.
uint64_t identity_map_limit();
#else
// Paging off: a physical address below 4 GiB is a pointer.
inline uint64_t identity_map_limit() { return uint64_t{1} << 32; }
#endif

}  // namespace ett::x86
