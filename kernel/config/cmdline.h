// cmdline.h: the capture kernel's command line: a strict key=value parser with errors that name the word.
//
// QEMU's -kernel loader (and GRUB Legacy) pass "<kernel path> <args>"; GRUB 2 passes only "<args>", so
// kernel_arguments() drops the path according to the loader's name. Options are key=value words separated by
// spaces, each at most once; config/cmdline_options.h lists them (probe=, layout=, limit=, exit=, dump=,
// mode=, auto=, trigger=, pretrigger=, filter=, stop=, keyboard=, threshold=, bench=, usb=) with their values
// and defaults.
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "ett/trace_format.h"

namespace ett::config {

enum class ExitAction : uint8_t { Halt, Qemu };
enum class DumpTarget : uint8_t { Ata, None, Serial };
// usb=: who drives the USB host controllers during the run (drivers/usb/legacy_handoff.h).
enum class UsbAction : uint8_t { Auto, Take, Keep };
// buffer=: which free RAM the capture buffer may use.
enum class BufferPlacement : uint8_t { All, Above4G, Split };

struct Config {
  format::ProbeSource probe = format::ProbeSource::Ivshmem;
  uint16_t probe_io_base = 0;    // lpt:BASE; 0 = the port's default
  bool probe_pci_given = false;  // pci-uart:BUS:DEV.FN
  uint8_t probe_pci_bus = 0, probe_pci_slot = 0, probe_pci_function = 0;
  format::Layout layout = format::Layout::Double2x4;
  uint32_t limit_ms = 0;  // 0 = no limit
  ExitAction exit = ExitAction::Halt;
  DumpTarget dump = DumpTarget::Ata;
  bool auto_start = false;  // auto=1: start at once and dump by itself (unattended); see unattended()
  format::CaptureMode mode = format::CaptureMode::Capture;
  bool trigger_enabled = false;
  uint8_t trigger_mask = 0;
  uint8_t trigger_match = 0;
  uint32_t pretrigger = 0;
  uint8_t filter_mask = 0xFF;                               // 0xFF = every line
  format::StopReason stop_rule = format::StopReason::None;  // None, ZeroCode or CodeMatch
  uint8_t stop_probe = 0;                                   // stop=code:P:C
  uint8_t stop_code = 0;
  bool keyboard = false;
  uint32_t hwlat_threshold_ns = 0;  // 0: not given (mode=hwlat then uses kDefaultHwlatThresholdNs)
  uint32_t bench_windows = 0;  // bench=N: window pairs of the loop benchmark before the capture (0: none)
  UsbAction usb = UsbAction::Auto;
  BufferPlacement buffer = BufferPlacement::All;
  bool uart_selftest = false;  // uart-selftest=1 (probe=uart-loopback only): the kernel drives MCR itself
};

inline constexpr uint32_t kDefaultHwlatThresholdNs = 1000;
inline constexpr uint32_t kMinBenchWindows = 20;
inline constexpr uint32_t kMaxBenchWindows = 1000;

// An unattended run (auto=1 or exit=qemu) starts capturing at once and dumps by itself; otherwise the start
// screen waits for Enter and the analysis stage saves on `S`.
inline bool unattended(const Config& config) {
  return config.auto_start || config.exit == ExitAction::Qemu;
}

// Whether the kernel takes the USB host controllers from the firmware's legacy support (its SMIs stop, and
// so does a USB keyboard it emulated): usb=take, or usb=auto in an unattended run, which needs no keyboard.
inline bool takes_usb(const Config& config) {
  return config.usb == UsbAction::Take || (config.usb == UsbAction::Auto && unattended(config));
}

// A message naming the offending word, e.g. "unknown option 'foo=1'".
struct CmdlineError {
  char message[160];
};

// Parses the arguments (the command line without the kernel path: see kernel_arguments).
Result<Config, CmdlineError> parse_cmdline(const char* arguments);

// The multiboot command line without the kernel path, leading spaces skipped. `loader_name` is the multiboot
// boot_loader_name ("" when the loader gave none): "GRUB 2.06" and other GRUB 1.9x/2.x names mean the line
// holds only arguments; any other loader ("qemu", GRUB Legacy "GNU GRUB 0.97", none) puts the path first.
const char* kernel_arguments(const char* cmdline, const char* loader_name);

// Whether `word` appears as a whole space-separated word: lets a command line that fails to parse still
// decide whether to leave QEMU (exit=qemu).
bool has_word(const char* cmdline, const char* word);

}  // namespace ett::config
