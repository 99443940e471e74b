// probe_layout.cpp: layouts by their kernel command-line names.
#include "common/probe_layout.h"

namespace ett::host {

std::optional<ProbeLayout> ProbeLayout::from_name(std::string_view name) {
  for (auto layout : {format::Layout::Double2x4, format::Layout::Single8x1, format::Layout::Quad4x2,
                      format::Layout::Byte1x8}) {
    if (name == format::layout_name(static_cast<uint32_t>(layout))) return ProbeLayout(layout);
  }
  return std::nullopt;
}

}  // namespace ett::host
