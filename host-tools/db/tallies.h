// tallies.h: what a load counts from a session's events as they go by: the content hash that identifies the
// trace, and the rows of event_codes and event_blocks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ett/trace_format.h"
#include "image/trace_image.h"

namespace ett::host {

// event_blocks groups a trace's events by seq >> kEventBlockShift: 4096 seqs a block, so that `window` reads
// at most a few thousand events beyond the ones it returns, and a 10 M-event trace has about 2,400 blocks.
inline constexpr int kEventBlockShift = 12;

// Incremental content_hash: the session header, then every event in seq order.
class ContentHasher {
 public:
  ContentHasher(const format::SessionHeader& header, uint64_t event_count);
  void add(const Event& event);
  std::string hex() const;

 private:
  uint64_t m_hash;
};

// A 64-bit hash of the session header and every decoded event, as 16 hex digits.
std::string content_hash(const format::SessionHeader& header, std::span<const Event> events);

// The content hash, events per probe and code, blocks of seqs and the highest probe number of a session's
// events, fed in seq order a span at a time. The hash covers the event count, which must be known first.
class EventTallies {
 public:
  // A block of seqs as event_blocks stores it: the first and last seq present, and the least and greatest
  // ticks from the capture start (signed: pretrigger events come before it).
  struct Block {
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    int64_t least_ticks = 0;
    int64_t greatest_ticks = 0;
  };

  EventTallies(const format::SessionHeader& header, uint64_t event_count);
  EventTallies() : EventTallies(format::SessionHeader{}, 0) {}
  void add(std::span<const Event> events);

  uint64_t events() const { return m_events; }
  std::string content_hash() const { return m_hasher.hex(); }
  // Events per probe * 256 + code.
  const std::vector<uint64_t>& codes() const { return m_codes; }
  const std::vector<Block>& blocks() const { return m_blocks; }
  int highest_probe() const { return m_highest_probe; }

 private:
  ContentHasher m_hasher;
  uint64_t m_capture_start_tsc;
  uint64_t m_events = 0;
  std::vector<uint64_t> m_codes;
  std::vector<Block> m_blocks;
  int m_highest_probe = 0;
};

}  // namespace ett::host
