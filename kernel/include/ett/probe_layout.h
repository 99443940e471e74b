// probe_layout.h: how the eight data lines D7..D0 split into probes under each layout (layout= on the kernel
// command line): the capture loop and every host tool that reads lines or codes use this one definition.
//
// Probe k (0-based here, k + 1 in EventRecord.probe) owns `bits_per_probe` consecutive lines starting at
// D(k * bits_per_probe): under 2x4, probe 1 = D0-D3 and probe 2 = D4-D7, as in the ETT double probe.
#pragma once

#include <stdint.h>

#include "ett/trace_format.h"

namespace ett::format {

struct LineSplit {
  uint8_t probe_count;
  uint8_t bits_per_probe;

  constexpr uint8_t shift(uint32_t k) const { return static_cast<uint8_t>(k * bits_per_probe); }
  constexpr uint8_t code_mask() const { return static_cast<uint8_t>((1u << bits_per_probe) - 1); }
  constexpr uint8_t mask(uint32_t k) const { return static_cast<uint8_t>(code_mask() << shift(k)); }
  constexpr uint8_t code(uint32_t k, uint8_t lines) const {
    return static_cast<uint8_t>((lines >> shift(k)) & code_mask());
  }
};

constexpr LineSplit line_split(Layout layout) {
  const uint32_t bits = layout_bits_per_probe(static_cast<uint32_t>(layout));
  if (bits == 0) return {0, 0};
  return {static_cast<uint8_t>(8 / bits), static_cast<uint8_t>(bits)};
}

// Every layout splits all eight lines among its probes.
static_assert(line_split(Layout::Double2x4).mask(1) == 0xF0);
static_assert(line_split(Layout::Single8x1).mask(7) == 0x80);
static_assert(line_split(Layout::Quad4x2).mask(3) == 0xC0);
static_assert(line_split(Layout::Byte1x8).mask(0) == 0xFF);

}  // namespace ett::format
