// capture.cpp: helpers of the in-memory capture model.
#include "analysis/capture.h"

#include "common/probe_layout.h"

namespace ett::host {

int probes_in_layout(const std::string& layout) {
  const std::optional<ProbeLayout> parsed = ProbeLayout::from_name(layout);
  return parsed ? parsed->probe_count() : 0;
}

}  // namespace ett::host
