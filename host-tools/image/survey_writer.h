// survey_writer.h: synthetic survey sessions (mode=survey) on a trace disk, as the kernel writes them: for
// the tests of `ett survey` and `ett synth --survey`.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "ett/trace_format.h"

namespace ett::host {

// The machines `ett synth --survey` describes.
enum class SurveyExample {
  Fit,      // an invariant TSC, SMIs countable and none, a parallel port at 0x378, a UART whose check failed
  Smis,     // the same PC with 3 SMIs in the window and hwlat gaps of up to 120 us
  NoProbe,  // no probe candidate at all, SMIs not countable
};

struct SurveySpec {
  format::SurveyBlock block{};  // the writer fills magic, version and crc
  uint64_t tsc_hz = 3'000'000'000;
  uint32_t flags = format::kFlagInvariantTsc;
  uint32_t smi_count = 0;
  std::string cpu_vendor = "GenuineIntel";
  std::string cpu_brand = "ett synth survey";
};

// "fit", "smis", "no-probe" (nullopt-like false for others).
bool survey_example_from_name(const std::string& name, SurveyExample& example);
SurveySpec survey_example(SurveyExample example);

struct SurveyWritten {
  uint32_t session = 0;
  bool created_disk = false;
  uint64_t block_lba = 0;  // where the SurveyBlock was written
};

// Appends a survey session to the trace disk at `path`, creating a small image file when it does not exist.
Expected<SurveyWritten> write_survey_session(const std::string& path, const SurveySpec& spec);

}  // namespace ett::host
