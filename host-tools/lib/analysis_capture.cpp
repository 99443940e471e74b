// analysis_capture.cpp: helpers of the in-memory capture model.
#include "analysis_capture.h"

namespace ett::host {

int probes_in_layout(const std::string& layout) {
  if (layout == "2x4") return 2;
  if (layout == "8x1") return 8;
  if (layout == "4x2") return 4;
  if (layout == "1x8") return 1;
  return 0;
}

}  // namespace ett::host
