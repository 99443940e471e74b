// probe_layout.cpp: probe counts and widths for each layout of trace_format.h.
#include "probe_layout.h"

namespace ett::host {

std::optional<ProbeLayout> ProbeLayout::from_name(std::string_view name) {
  for (auto layout : {format::Layout::Double2x4, format::Layout::Single8x1, format::Layout::Quad4x2,
                      format::Layout::Byte1x8}) {
    if (name == format::layout_name(static_cast<uint32_t>(layout))) return ProbeLayout(layout);
  }
  return std::nullopt;
}

int ProbeLayout::probe_count() const {
  return 8 / bits_per_probe();
}

int ProbeLayout::bits_per_probe() const {
  return static_cast<int>(format::layout_bits_per_probe(static_cast<uint32_t>(m_layout)));
}

}  // namespace ett::host
