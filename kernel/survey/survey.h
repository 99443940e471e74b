// survey.h: mode=survey, one boot that says whether this PC is fit to measure. It reports, without
// capturing anything: the TSC measured against every reference timer and how far each is from the chosen
// one, SMIs and the gaps of a short hwlat run, every probe candidate (legacy parallel ports, a PCI parallel
// card, the UARTs, the ivshmem virtual probe) with the cost of one input read and the longest loop step of a
// short calibrate run, every disk, the RAM the capture buffer would get and the keyboard controller. The
// result is a format::SurveyBlock (trace_format.h) for the trace disk, and one line per item on the screen
// and serial. The host's `ett survey` turns the block into verdicts; the kernel only reports.
#pragma once

#include <stdint.h>

#include "arch/x86/cpu_info.h"
#include "arch/x86/tsc_calibration.h"
#include "capture/event_buffer.h"
#include "config/cmdline.h"
#include "ett/trace_format.h"

namespace ett::survey {

// The hwlat run's default length (limit= sets another), and the probe checks' sizes.
inline constexpr uint32_t kDefaultWindowMs = 3000;
inline constexpr uint32_t kTimedReads = 4096;          // single input reads timed per probe
inline constexpr uint32_t kCalibrateSteps = 1u << 16;  // loop steps of each probe's calibrate run
inline constexpr uint32_t kCalibrateLimitMs = 2000;    // and its deadline, should the steps take longer

struct Machine {
  const config::Config& config;
  const x86::CpuInfo& cpu;
  const x86::TscCalibration& tsc;
  const char* no_keyboard;      // nullptr when an 8042 answered, else why not
  capture::EventBuffer buffer;  // the capture buffer (uncapped by any disk): scratch for the runs
  uint64_t usable_memory_bytes;
};

// Runs every check and fills `block` (sealed) and the survey fields of `header` (smi_count and
// kFlagSmiCount, hwlat_threshold_ns, limit_ms = the window, loop_iterations of the hwlat run). The disk
// table comes from dump::TraceDisk::census; it is passed in filled. Interrupts are off afterwards.
void run(const Machine& machine, format::SurveyBlock& block, format::SessionHeader& header);

// The block as text, one line per item ("ETT: survey: ..."), on the screen and serial.
void print(const format::SurveyBlock& block, const format::SessionHeader& header);

}  // namespace ett::survey
