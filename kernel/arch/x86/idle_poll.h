// idle_poll.h: the capture loop's idle step in assembly, one per kind of probe read (a byte in memory, a
// port).
//
// Written out rather than left to the compiler because gcc's register allocation of the whole capture loop
// decides whether the idle step keeps its values in registers, and on i686 it did not for every layout,
// source and filter setting (some reloaded the port, the mask or the countdown from the stack, or stored the
// read byte, on every poll). Here every operand is a register by constraint, so each instantiation runs the
// same few instructions:
//     1: movzbl (%src),%raw   | in (%dx),%al       ; read the lines (the only memory or I/O access)
//        [filtered: movzbl %raw,%tmp; and %mask,%tmp] ; keep only the lines filter= watches
//        cmp    %last,%raw/tmp                      ; same as last time?
//        jne    2f                                  ; no: a change, leave with the byte read
//        dec    %countdown                          ; yes: count the poll down to the next stop check
//        jnz    1b
//     2:
// The loop (8 to 14 bytes) starts on a 16-byte boundary, so it never straddles a page: under QEMU's TCG a
// jump to another page cannot be chained to its target and costs a lookup, which made the same loop up to 7x
// slower at an unlucky address (the padding before it runs once per change or stop check, not per poll).
// Returns the last byte read. On a change the countdown is not decremented for that poll: the caller counts
// it after recording the change, as for any other poll. `countdown` must be at least 1 on entry.
// tests/kernel/hot_loop_check.sh finds this loop in every run_capture instantiation and checks it.
#pragma once

#include <stdint.h>

namespace ett::x86 {

// The lines are a byte in memory (QEMU's ivshmem probe). `last` is the previous masked byte.
template <bool kFiltered>
[[gnu::always_inline]] inline uint8_t idle_poll_memory(const volatile uint8_t* lines, uint32_t last,
                                                       uint32_t mask, uint32_t& countdown) {
  uint32_t raw;
  if constexpr (kFiltered) {
    uint32_t masked;
    asm volatile(
        ".p2align 4\n"
        "1:\n\t"
        "movzbl (%[lines]), %[raw]\n\t"
        "mov %[raw], %[masked]\n\t"
        "and %[mask], %[masked]\n\t"
        "cmp %[last], %[masked]\n\t"
        "jne 2f\n\t"
        "dec %[countdown]\n\t"
        "jnz 1b\n"
        "2:"
        : [raw] "=&r"(raw), [masked] "=&r"(masked), [countdown] "+r"(countdown)
        : [lines] "r"(lines), [last] "r"(last), [mask] "r"(mask)
        : "cc", "memory");
  } else {
    (void)mask;
    asm volatile(
        ".p2align 4\n"
        "1:\n\t"
        "movzbl (%[lines]), %[raw]\n\t"
        "cmp %[last], %[raw]\n\t"
        "jne 2f\n\t"
        "dec %[countdown]\n\t"
        "jnz 1b\n"
        "2:"
        : [raw] "=&r"(raw), [countdown] "+r"(countdown)
        : [lines] "r"(lines), [last] "r"(last)
        : "cc", "memory");
  }
  return static_cast<uint8_t>(raw);
}

// The lines are a port's data register (parallel ports): `in` needs %dx and %al.
template <bool kFiltered>
[[gnu::always_inline]] inline uint8_t idle_poll_port(uint16_t port, uint32_t last, uint32_t mask,
                                                     uint32_t& countdown) {
  uint8_t raw;
  if constexpr (kFiltered) {
    uint32_t masked;
    asm volatile(
        ".p2align 4\n"
        "1:\n\t"
        "inb %w[port], %[raw]\n\t"
        "movzbl %[raw], %[masked]\n\t"
        "and %[mask], %[masked]\n\t"
        "cmp %[last], %[masked]\n\t"
        "jne 2f\n\t"
        "dec %[countdown]\n\t"
        "jnz 1b\n"
        "2:"
        : [raw] "=&a"(raw), [masked] "=&r"(masked), [countdown] "+r"(countdown)
        : [port] "d"(port), [last] "r"(last), [mask] "r"(mask)
        : "cc", "memory");
  } else {
    (void)mask;
    const auto last8 = static_cast<uint8_t>(last);
    asm volatile(
        ".p2align 4\n"
        "1:\n\t"
        "inb %w[port], %[raw]\n\t"
        "cmp %[last], %[raw]\n\t"
        "jne 2f\n\t"
        "dec %[countdown]\n\t"
        "jnz 1b\n"
        "2:"
        : [raw] "=&a"(raw), [countdown] "+r"(countdown)
        : [port] "d"(port), [last] "q"(last8)
        : "cc", "memory");
  }
  return raw;
}

}  // namespace ett::x86
