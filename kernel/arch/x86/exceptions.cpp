// exceptions.cpp: the IDT of the 32 CPU exception vectors, with gcc interrupt-attribute handlers.
#include "arch/x86/exceptions.h"

#include <stdint.h>

#include "arch/x86/cpu.h"
#include "runtime/panic.h"

namespace ett::x86 {

namespace {

constexpr uint32_t kExceptionCount = 32;

// present, ring 0, interrupt gate (32-bit in protected mode, 64-bit in long mode: the same type value)
constexpr uint8_t kInterruptGate = 0x8E;

#ifdef __x86_64__
struct [[gnu::packed]] IdtGate {
  uint16_t offset_low;
  uint16_t selector;
  uint8_t ist;  // 0: stay on the current stack
  uint8_t type;
  uint16_t offset_middle;
  uint32_t offset_high;
  uint32_t reserved;
};
static_assert(sizeof(IdtGate) == 16);
constexpr IdtGate make_gate(uintptr_t address, uint16_t selector) {
  return IdtGate{
      static_cast<uint16_t>(address),       selector, 0, kInterruptGate, static_cast<uint16_t>(address >> 16),
      static_cast<uint32_t>(address >> 32), 0};
}
using ErrorCode = unsigned long;  // what gcc's interrupt attribute asks for: a word
#else
struct [[gnu::packed]] IdtGate {
  uint16_t offset_low;
  uint16_t selector;
  uint8_t zero;
  uint8_t type;
  uint16_t offset_high;
};
static_assert(sizeof(IdtGate) == 8);
constexpr IdtGate make_gate(uintptr_t address, uint16_t selector) {
  return IdtGate{static_cast<uint16_t>(address), selector, 0, kInterruptGate,
                 static_cast<uint16_t>(address >> 16)};
}
using ErrorCode = unsigned int;
#endif

// What the CPU pushes (after the error code, if any): the return address, cs, flags (and in long mode always
// the stack pointer and ss, not used here).
struct InterruptFrame {
  uintptr_t ip;
  uintptr_t cs;
  uintptr_t flags;
};

alignas(8) IdtGate g_idt[kExceptionCount];

constexpr const char* kNames[kExceptionCount] = {"#DE divide error",
                                                 "#DB debug",
                                                 "NMI",
                                                 "#BP breakpoint",
                                                 "#OF overflow",
                                                 "#BR bound range",
                                                 "#UD invalid opcode",
                                                 "#NM no math coprocessor",
                                                 "#DF double fault",
                                                 "coprocessor segment overrun",
                                                 "#TS invalid TSS",
                                                 "#NP segment not present",
                                                 "#SS stack fault",
                                                 "#GP general protection",
                                                 "#PF page fault",
                                                 "reserved 15",
                                                 "#MF x87 error",
                                                 "#AC alignment check",
                                                 "#MC machine check",
                                                 "#XM SIMD error",
                                                 "#VE virtualization",
                                                 "#CP control protection",
                                                 "reserved 22",
                                                 "reserved 23",
                                                 "reserved 24",
                                                 "reserved 25",
                                                 "reserved 26",
                                                 "reserved 27",
                                                 "#HV hypervisor injection",
                                                 "#VC VMM communication",
                                                 "#SX security",
                                                 "reserved 31"};

constexpr bool has_error_code(uint32_t vector) {
  return vector == 8 || (vector >= 10 && vector <= 14) || vector == 17 || vector == 21 || vector == 29 ||
         vector == 30;
}

// The message is put together by hand (no formatter, no division, nothing but byte stores), so that the
// report itself cannot raise the exception it reports: an invalid opcode in the formatter used to fault again
// in its own handler, forever.
class Message {
 public:
  Message& text(const char* text) {
    while (*text != '\0' && m_length < sizeof(m_text) - 1) m_text[m_length++] = *text++;
    m_text[m_length] = '\0';
    return *this;
  }
  Message& hex(uint64_t value, uint32_t digits) {
    static constexpr char kDigits[] = "0123456789abcdef";
    char out[17] = {};
    for (uint32_t i = digits; i-- > 0; value >>= 4) out[i] = kDigits[value & 0xF];
    return text(out);
  }
  const char* c_str() const { return m_text; }

 private:
  char m_text[112] = {};
  uint32_t m_length = 0;
};

bool g_reporting = false;

// The RDMSR of read_msr_safe and the instruction after it (labels in its inline assembly), and whether the
// #GP handler resumed there.
extern "C" const char ett_safe_rdmsr[];
extern "C" const char ett_safe_rdmsr_resume[];
volatile bool g_msr_faulted = false;

constexpr uint32_t kGeneralProtection = 13;

// A #GP raised by read_msr_safe's RDMSR: resume after it with the fault noted.
bool recover_msr_fault(InterruptFrame* frame) {
  if (frame->ip != reinterpret_cast<uintptr_t>(ett_safe_rdmsr)) return false;
  g_msr_faulted = true;
  frame->ip = reinterpret_cast<uintptr_t>(ett_safe_rdmsr_resume);
  return true;
}

[[noreturn]] void report(uint32_t vector, const InterruptFrame* frame, uintptr_t error_code) {
  if (g_reporting) panic("cpu exception while reporting a cpu exception");  // once: panic() does not recurse
  g_reporting = true;
  static Message message;
  message.text("cpu exception 0x")
      .hex(vector, 2)
      .text(" (")
      .text(kNames[vector])
      .text(sizeof(uintptr_t) == 8 ? ") at rip=0x" : ") at eip=0x");
  message.hex(frame->ip, sizeof(uintptr_t) * 2).text(", error code 0x").hex(error_code, 8);
  panic(message.c_str());
}

template <uint32_t kVector>
[[gnu::interrupt, gnu::target("general-regs-only")]] void handle(InterruptFrame* frame) {
  report(kVector, frame, 0);
}

template <uint32_t kVector>
[[gnu::interrupt, gnu::target("general-regs-only")]] void handle_with_code(InterruptFrame* frame,
                                                                           ErrorCode error_code) {
  if constexpr (kVector == kGeneralProtection)
    if (recover_msr_fault(frame)) return;
  report(kVector, frame, error_code);
}

template <uint32_t kVector>
uintptr_t handler_address() {
  if constexpr (has_error_code(kVector))
    return reinterpret_cast<uintptr_t>(&handle_with_code<kVector>);
  else
    return reinterpret_cast<uintptr_t>(&handle<kVector>);
}

template <uint32_t kVector = 0>
void fill_gates(uint16_t selector) {
  if constexpr (kVector < kExceptionCount) {
    const uintptr_t address = handler_address<kVector>();
    g_idt[kVector] = make_gate(address, selector);
    fill_gates<kVector + 1>(selector);
  }
}

}  // namespace

void install_exception_handlers() {
  fill_gates(code_segment());
  load_idt(g_idt, sizeof(g_idt));
}

// noinline: the labels must exist once.
[[gnu::noinline]] Result<uint64_t> read_msr_safe(uint32_t msr) {
  g_msr_faulted = false;
  uint32_t low = 0, high = 0;
  asm volatile(
      ".globl ett_safe_rdmsr\n"
      "ett_safe_rdmsr:\n\t"
      "rdmsr\n"
      ".globl ett_safe_rdmsr_resume\n"
      "ett_safe_rdmsr_resume:"
      : "+a"(low), "+d"(high)
      : "c"(msr)
      : "memory");
  if (g_msr_faulted) return fail("RDMSR raised #GP: this CPU (or its hypervisor) has no such MSR");
  return (static_cast<uint64_t>(high) << 32) | low;
}

}  // namespace ett::x86
