// probe_layout.h: a layout with its name and 1-based probe numbers, over the kernel's split
// (ett/probe_layout.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ett/probe_layout.h"
#include "ett/trace_format.h"

namespace ett::host {

class ProbeLayout {
 public:
  ProbeLayout() = default;  // 2x4, the ETT double probe
  explicit ProbeLayout(format::Layout layout) : m_layout(layout) {}

  // "2x4", "8x1", "4x2", "1x8" (the kernel's layout= values); nullopt for anything else.
  static std::optional<ProbeLayout> from_name(std::string_view name);

  format::Layout layout() const { return m_layout; }
  const char* name() const { return format::layout_name(static_cast<uint32_t>(m_layout)); }
  format::LineSplit split() const { return format::line_split(m_layout); }
  int probe_count() const { return split().probe_count; }
  int bits_per_probe() const { return split().bits_per_probe; }
  // Probe numbers are 1-based; probe k occupies lines D(shift)..D(shift + bits - 1).
  int shift(int probe) const { return split().shift(static_cast<uint32_t>(probe - 1)); }
  uint8_t mask(int probe) const { return split().mask(static_cast<uint32_t>(probe - 1)); }
  uint8_t max_code() const { return split().code_mask(); }

  uint8_t code_of(uint8_t lines, int probe) const {
    return split().code(static_cast<uint32_t>(probe - 1), lines);
  }
  uint8_t with_code(uint8_t lines, int probe, uint8_t code) const {
    return static_cast<uint8_t>((lines & ~mask(probe)) | ((code << shift(probe)) & mask(probe)));
  }

 private:
  format::Layout m_layout = format::Layout::Double2x4;
};

}  // namespace ett::host
