// survey.h: reads a survey session's SurveyBlock (mode=survey: what a PC offers for measuring) and turns it
// into a verdict per use: can this PC capture on this source, and with which precision bound pi.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ett/trace_format.h"
#include "image/trace_image.h"

namespace ett::host {

struct Survey {
  uint32_t session = 0;
  format::SessionHeader header{};
  format::SurveyBlock block{};  // counts checked against the tables' sizes
};

// The survey session `number`, or the newest survey session when nullopt. Errors, each naming the problem:
// EmptyDisk (no survey session on the disk), NoSuchSession (no session N, or session N is not a survey),
// Truncated (the image ends inside the block), BadCrc (a damaged block: magic, CRC, counts larger than the
// tables, a header that reserves too few sectors), UnknownVersion (a survey block version this ett does not
// read).
Expected<Survey> read_survey(const TraceImage& image, std::optional<uint32_t> number);

// One use of the PC: capturing on one probe candidate.
struct ProbeVerdict {
  std::string name;  // "lpt:0x378"
  bool fit = false;
  std::optional<double> pi_ns;  // step_ticks_max as time + epsilon (one TSC tick); nullopt without a step run
  std::string text;             // "fit to capture on lpt:0x378: pi 1.2 us, 0 SMIs in 10 s, ..."
};

struct SurveyVerdict {
  std::vector<ProbeVerdict> probes;  // one per probe candidate, in the block's order
  bool fit = false;
  std::string text;  // "fit: capture on lpt:0x378 (pi 1.2 us)" or "not fit: <reason>"
};

SurveyVerdict judge(const Survey& survey);

// The whole report: text (one section per topic, then the verdicts) and JSON (the same content).
std::string survey_text(const Survey& survey, const std::string& image_path);
nlohmann::ordered_json survey_json(const Survey& survey);

}  // namespace ett::host
