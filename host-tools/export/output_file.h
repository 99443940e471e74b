// output_file.h: writes an export or report to a file (never over an existing one unless forced) or stdout.
#pragma once

#include <string>

#include "common/status.h"

namespace ett::host {

// path "" or "-": standard output.
Status write_output(const std::string& path, const std::string& text, bool force);

}  // namespace ett::host
