// cmdline.h: the capture kernel's command line: a strict key=value parser with errors that name the word.
//
// QEMU's -kernel loader (and GRUB Legacy) pass "<kernel path> <args>"; GRUB 2 passes only "<args>", so
// kernel_arguments() drops the path according to the loader's name. Options, separated by spaces, each at
// most once:
//   probe=ivshmem|lpt|lpt:BASE|pci-lpt   (default ivshmem; the lpt sources parse but are not supported yet)
//   layout=2x4|8x1|4x2|1x8               (default 2x4)
//   limit=SECONDS                        (> 0, up to 3 decimals; default: no limit)
//   exit=qemu|halt                       (default halt)
//   dump=ata|none                        (default ata)
//   mode=capture                         (calibrate and hwlat parse but are not supported yet)
#pragma once

#include <stdint.h>

#include "ett/result.h"
#include "ett/trace_format.h"

namespace ett::config {

enum class ExitAction : uint8_t { Halt, Qemu };
enum class DumpTarget : uint8_t { Ata, None };

struct Config {
  format::ProbeSource probe = format::ProbeSource::Ivshmem;
  uint16_t probe_io_base = 0;  // lpt:BASE; 0 = the port's default
  format::Layout layout = format::Layout::Double2x4;
  uint32_t limit_ms = 0;  // 0 = no limit
  ExitAction exit = ExitAction::Halt;
  DumpTarget dump = DumpTarget::Ata;
  format::CaptureMode mode = format::CaptureMode::Capture;
};

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
