// cmdline_options.h: the kernel command line's options, one row each. The parser (cmdline.cpp) takes its keys
// from this table, in this order, and docs/reference/kernel-cmdline.md is printed from it (ett-reference), so
// the reference names exactly the options the kernel accepts.
#pragma once

#include <stdint.h>

namespace ett::config {

struct CmdlineOption {
  const char* key;       // "probe": the word is key=value
  const char* values;    // what the value may be
  const char* fallback;  // the default, when the option is not given
  const char* meaning;
};

inline constexpr CmdlineOption kCmdlineOptions[] = {
    {"probe",
     "ivshmem, lpt, lpt:BASE, pci-lpt, lpt-loopback, uart, uart:BASE, uart-loopback, pci-uart, "
     "pci-uart:BUS:DEV.FN",
     "ivshmem",
     "Where the eight lines are read. ivshmem: the QEMU virtual probe; lpt / lpt:BASE: a legacy parallel "
     "port "
     "switched to input (ECR at BASE+0x402 to PS/2 mode when there is one, direction bit set, checked before "
     "every capture; BASE decimal or 0x-hex, default 0x378); pci-lpt: a card of the list (WCH CH382L, CH382, "
     "CH353) or of class 0x07/0x01 with programming interface 01, 02 or 03 (ECR in its second I/O BAR); "
     "lpt-loopback: TEST ONLY, the port at 0x378 with the direction "
     "bit "
     "clear, reading back its own data register; uart / uart:BASE: a 16550-compatible UART's modem-status "
     "inputs as lines D0 = DCD, D1 = DSR, D2 = CTS, D3 = RI (default COM2 at 0x2f8; COM1, the serial "
     "console, is refused), a pulse shorter than one poll still recorded from the UART's delta bits; "
     "uart-loopback (or uart-loopback:BASE): TEST ONLY, the same UART in loopback mode (MCR bit 4), its "
     "own outputs driving the inputs; pci-uart / pci-uart:BUS:DEV.FN: port 0 of a PCI serial card (WCH "
     "CH382/CH384, Oxford OXPCIe95x, MosChip MCS99xx, ASIX AX99100, or any of class 0x07/0x00 with a "
     "16550-family interface; I/O or memory-mapped), the first found or the one at that address (hex, as "
     "lspci prints it), its modem-status inputs as for uart"},
    {"layout", "2x4, 8x1, 4x2, 1x8", "2x4",
     "How the lines D0..D7 form probes. 2x4: the ETT double probe, probe 1 = D0-D3, probe 2 = D4-D7; 8x1: "
     "probe k = D(k-1); 4x2: probe k = D(2k-2)..D(2k-1); 1x8: one 8-bit probe"},
    {"limit", "SECONDS (> 0, up to 3 decimals)", "no limit (mode=survey: 3)",
     "Stop the capture after this long; mode=survey: the length of its hwlat run, over which it also counts "
     "the SMIs"},
    {"exit", "qemu, halt", "halt",
     "qemu: leave QEMU through isa-debug-exit when done (status 33, failure 35); halt: stay on the summary "
     "screen"},
    {"dump", "ata, serial, none", "ata",
     "ata: append the session to the first labelled disk (IDE, AHCI or NVMe); serial: stream it over COM1 as "
     "ETTX lines, which `ett ls` and `ett extract` read from the saved log; none: keep it in RAM only"},
    {"mode", "capture, calibrate, hwlat, survey", "capture",
     "capture: record line changes; calibrate: a record per loop step, aux = the step's length in ticks (the "
     "ETT paper's section 5); hwlat: spin with interrupts off reading only the TSC, each gap above "
     "threshold= "
     "is a record (tsc = start, aux = ticks), no probe opened; survey: no capture, one boot that says "
     "whether "
     "this PC is fit to measure (timers, SMIs and an hwlat run, every probe candidate with its read cost, "
     "every disk, RAM, keyboard), as screen and serial lines and, on a trace disk, a survey session"},
    {"auto", "0, 1", "0",
     "0: the start screen waits for Enter and the analysis stage saves on S; 1: start at once and dump by "
     "itself. exit=qemu implies 1, and so does a PC without an 8042 keyboard controller"},
    {"trigger", "8 trits D7..D0 of 1, 0, X", "none",
     "Recording starts at the change that makes the lines match (time 0); already matching at the start = at "
     "once. A separate wait loop: the capture loop is unchanged"},
    {"pretrigger", "N (needs trigger=)", "0",
     "The last N events before the trigger are kept (negative time_ns), in a ring at the front of the "
     "buffer"},
    {"filter", "8 trits of 1, X", "all lines",
     "Only changes on the lines marked 1 give events (a probe's code is still read from all its lines); the "
     "idle step gains a copy and an and"},
    {"stop", "zero, code:P:C", "none",
     "zero: a zero code on any probe ends the capture, that poll's events included (the ETT rule); code:P:C: "
     "code C (decimal or 0x-hex) on probe P. Checked per recorded event, never on the idle step"},
    {"keyboard", "0, 1", "0",
     "1: a new key press ends the capture (the PS/2 status port is read at each stop check, every 1024 "
     "polls); "
     "ignored, with a note, on a PC without an 8042"},
    {"threshold", "NS (1 to 1000000000; mode=hwlat, survey)", "1000",
     "The smallest gap mode=hwlat records (and mode=survey's hwlat run counts), in ns"},
    {"bench", "N (20 to 1000; mode=capture)", "none",
     "Before the capture, time the capture loop as configured against the bare poll floor in N interleaved "
     "window pairs of 1 ms and print them on serial (ETT: bench window ...)"},
    {"usb", "auto, take, keep", "auto",
     "take: hand every USB host controller over from the firmware's legacy support before the run, so its "
     "SMIs stop (a USB keyboard then stops working); keep: leave them to the firmware (a USB keyboard works, "
     "its SMIs stay); auto: take in an unattended run, keep otherwise"},
    {"buffer", "all, above4g, split", "all",
     "all: the capture buffer is all free RAM (x86-64 kernel: every free piece, mapped as one; i686 kernel: "
     "the "
     "largest piece below 4 GiB); above4g: TEST ONLY, x86-64 kernel: only the free RAM above 4 GiB; split: "
     "TEST "
     "ONLY, x86-64 kernel: only the first 2 MiB of each free piece, so that a short capture runs across "
     "pieces (the i686 kernel warns and ignores both)"},
    {"uart-selftest", "0, 1", "0",
     "TEST ONLY, with probe=uart-loopback and layout=2x4: during the capture the kernel itself writes the "
     "UART's MCR (loopback bit set) through a fixed sequence, 0x11, 0x13, 0x17, 0x1f, 0x10, one value before "
     "each poll, so a machine that cannot drive the UART from outside (Bochs) captures a known sequence: "
     "probe 1's codes 2, 6, 14, 15, 0"},
};

inline constexpr uint32_t kCmdlineOptionCount = sizeof(kCmdlineOptions) / sizeof(kCmdlineOptions[0]);

}  // namespace ett::config
