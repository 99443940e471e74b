// virtual_probe.h: the QEMU virtual probe shared between the host injector and the capture kernel.
//
// The probe is an ivshmem-plain PCI device whose BAR2 maps a host file (share=on). Byte 0 holds the eight
// data lines D7..D0, written by the host; nothing else lives in that byte, so all eight lines are free.
// A control block at kControlOffset carries the handshake: the kernel publishes its state, the host asks it
// to stop; the host's magic and version in it mark the file as a virtual probe. The kernel leaves QEMU
// through isa-debug-exit with kExitSuccess or kExitFailure.
#pragma once

#include <stdint.h>

namespace ett::vprobe {

inline constexpr uint16_t kPciVendor = 0x1af4;  // Red Hat / virtio
inline constexpr uint16_t kPciDevice = 0x1110;  // ivshmem
inline constexpr uint32_t kMinSize = 1u << 20;  // the host creates 1 MiB (a power of two, as ivshmem needs)

inline constexpr uint32_t kLinesOffset = 0;            // uint8_t: D7..D0
inline constexpr uint32_t kControlOffset = 4096;       // struct Control, on its own page
inline constexpr uint32_t kControlMagic = 0x4B545445;  // "ETTK" little-endian: the kernel found the probe
// Written by the host when it creates the file, before QEMU starts: libettprobe opens only a file that
// carries both, so a mistyped path (a trace disk, any other file) is refused instead of having its byte 0
// overwritten.
inline constexpr uint32_t kHostMagic = 0x50545445;  // "ETTP" little-endian: a virtual probe file
inline constexpr uint32_t kFileVersion = 1;         // the layout of this block; a new one changes this

enum class KernelState : uint32_t {
  Booting = 0,    // the host zeroes the control block before starting QEMU
  Capturing = 1,  // initial lines read; every change from now on is recorded
  Stopped = 2,    // the loop ended; stop_reason is set
  Dumping = 3,
  Done = 4,    // dump flushed; the kernel is about to exit
  Failed = 5,  // see the serial console for the message
};

enum class HostCommand : uint32_t {
  None = 0,
  Stop = 1,  // end the capture (StopReason::HostRequest)
};

// Written with volatile accesses on both sides; each field is naturally aligned.
struct Control {
  uint32_t magic;              // kernel: kControlMagic once it has found the probe
  uint32_t state;              // kernel: KernelState
  uint32_t command;            // host:   HostCommand
  uint32_t stop_reason;        // kernel: format::StopReason once stopped
  uint64_t event_count;        // kernel: events captured, valid from Stopped on
  uint64_t tsc_hz;             // kernel: calibrated TSC frequency, valid from Capturing on
  uint64_t capture_start_tsc;  // kernel: time 0 of the capture, valid from Capturing on
  uint32_t session_number;     // kernel: session written, valid at Done
  uint32_t heartbeat;          // kernel: +1 at every stop check (every 1024 polls) while capturing
  // kernel: TSC / 256 (bits 8..39) at every stop check, stored before `heartbeat` (one aligned 32-bit store:
  // the host never reads half of it; 256 ticks of resolution so that it wraps only after 2^40 ticks, 18 min
  // at 1 GHz, and the host can unwrap it from capture_start_tsc). Under QEMU's -icount the TSC counts
  // executed instructions and stands still while the host deschedules the vCPU: the host then schedules its
  // writes on this clock. 0 until the first stop check (heartbeat 0).
  uint32_t clock_256;
  uint32_t host_magic;    // host:   kHostMagic, set when the file is created
  uint32_t file_version;  // host:   kFileVersion
  // host: 0, or a time on the clock_256 scale: a stop check at or past it (signed 32-bit difference) waits,
  // writing to kHoldWaitPort, until the host moves or clears it (or asks to stop). The host sets it a little
  // after the due time of its next write when it plays on the guest's clock (-icount): the guest's clock then
  // cannot run far past a write the host was too late for (descheduled), so the host's delay does not show
  // in guest time. Zero (as the host creates the block) keeps older hosts working.
  uint32_t hold_256;
};

// The stop check's wait for hold_256 writes a byte to this port at each turn: QEMU's isa-debugcon, which
// the host gives a pipe it keeps full (harness HoldPipe), so that the vCPU blocks in the write until the host
// lets it go and the guest's clock (-icount) stands still meanwhile. Without that device (a PC; QEMU started
// by hand) the write goes nowhere and the wait spins. Not 0x402 or 0xe9: SeaBIOS and OVMF print their logs to
// the debugcon port they find there, which would block in the full pipe.

// Pacing: once the host has seen `heartbeat` advance by kPaceBeats after a write, every later poll of the
// kernel has read that write's byte, so the next write cannot merge with it. The host uses this to ride out
// emulator stalls (the vCPU thread descheduled) without turning them into lost or merged events.
inline constexpr uint32_t kPaceBeats = 2;

inline constexpr uint16_t kHoldWaitPort = 0x4e9;

// isa-debug-exit (iobase 0xf4): QEMU exits with status (value << 1) | 1.
inline constexpr uint16_t kDebugExitPort = 0xf4;
inline constexpr uint8_t kExitSuccess = 0x10;  // QEMU exit status 33
inline constexpr uint8_t kExitFailure = 0x11;  // QEMU exit status 35
constexpr int qemu_status_for(uint8_t value) {
  return ((value << 1) | 1) & 0xFF;
}

}  // namespace ett::vprobe
