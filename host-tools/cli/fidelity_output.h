// fidelity_output.h: the fidelity report of a run in the data formats, and --check's verdict on it, shared by
// `ett fidelity` and `ett qemu run`.
#pragma once

#include <string>
#include <vector>

#include "commands.h"
#include "data_output.h"
#include "harness/fidelity.h"

namespace ett::cli {

// text: the lines `ett qemu run` prints; json: machines_document (one object per machine with a report);
// jsonl: those objects one a line; csv: one row per machine, a column per key (empty for null or absent).
std::string render_fidelity(const std::vector<host::MachineFidelity>& machines, DataFormat format);

// The exit status of --check (0, or 6 after a one-line warning that says why).
int fidelity_check_status(const std::vector<host::MachineFidelity>& machines, double tolerance_us);

// --check and --tolerance on `sub`, worded the same for both verbs (`what`: how the verb names the report).
void add_fidelity_check_options(CLI::App* sub, bool& check, double& tolerance_us, const std::string& what);

// --check: the capture is complete but does not match what was sent.
inline constexpr int kFidelityCheckFailed = 6;

}  // namespace ett::cli
