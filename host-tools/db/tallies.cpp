// tallies.cpp: the content hash and the load's counts.
#include "db/tallies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ett::host {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

ContentHasher::ContentHasher(const format::SessionHeader& header, uint64_t event_count)
    : m_hash(mix(0x6574742d74726163ull ^ event_count)) {
  const auto* words = reinterpret_cast<const uint8_t*>(&header);
  for (size_t i = 0; i + 8 <= sizeof(header); i += 8) {
    uint64_t word;
    std::memcpy(&word, words + i, 8);
    m_hash = mix(m_hash ^ word) + i;
  }
}

void ContentHasher::add(const Event& event) {
  m_hash = mix(m_hash ^ event.seq);
  m_hash = mix(m_hash ^ event.tsc);
  m_hash = mix(m_hash ^ (uint64_t{event.probe} | uint64_t{event.code} << 8 | uint64_t{event.lines} << 16 |
                         uint64_t{event.flags} << 24 | uint64_t{event.aux} << 32));
}

std::string ContentHasher::hex() const {
  return fmt::format("{:016x}", m_hash);
}

std::string content_hash(const format::SessionHeader& header, std::span<const Event> events) {
  ContentHasher hasher(header, events.size());
  for (const Event& event : events) hasher.add(event);
  return hasher.hex();
}

EventTallies::EventTallies(const format::SessionHeader& header, uint64_t event_count)
    : m_hasher(header, event_count), m_capture_start_tsc(header.capture_start_tsc), m_codes(256 * 256) {}

void EventTallies::add(std::span<const Event> events) {
  m_events += events.size();
  for (const Event& event : events) {
    m_hasher.add(event);
    ++m_codes[event.probe * 256u + event.code];
    m_highest_probe = std::max<int>(m_highest_probe, event.probe);
    const auto ticks = static_cast<int64_t>(event.tsc - m_capture_start_tsc);
    if (m_blocks.empty() || event.seq >> kEventBlockShift != m_blocks.back().first_seq >> kEventBlockShift) {
      m_blocks.push_back(Block{event.seq, event.seq, ticks, ticks});
      continue;
    }
    Block& block = m_blocks.back();
    block.last_seq = event.seq;
    block.least_ticks = std::min(block.least_ticks, ticks);
    block.greatest_ticks = std::max(block.greatest_ticks, ticks);
  }
}

}  // namespace ett::host
