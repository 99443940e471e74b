// memory_map.cpp: carves the excluded ranges out of the available RAM and keeps the largest piece.
#include "lib/memory_map.h"

namespace ett::lib {

namespace {

bool inside_any(uint64_t address, const PhysRange* ranges, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (ranges[i].start <= address && address < ranges[i].end) return true;
  return false;
}

// Calls visit(piece) for every aligned free piece.
template <typename Visit>
void for_each_free_piece(const PhysRange* available, size_t available_count, const PhysRange* excluded,
                         size_t excluded_count, uint64_t floor, uint64_t ceiling, uint64_t alignment,
                         Visit visit) {
  const uint64_t align_mask = alignment - 1;
  for (size_t i = 0; i < available_count; ++i) {
    const uint64_t start = available[i].start > floor ? available[i].start : floor;
    const uint64_t end = available[i].end < ceiling ? available[i].end : ceiling;
    if (start >= end) continue;
    // A free piece starts at the region's start or where an excluded range ends, and runs to the nearest
    // excluded start after it (or the region's end).
    for (size_t c = 0; c <= excluded_count; ++c) {
      const uint64_t piece_start = c == excluded_count ? start : excluded[c].end;
      if (piece_start < start || piece_start >= end) continue;
      if (inside_any(piece_start, excluded, excluded_count)) continue;
      uint64_t piece_end = end;
      for (size_t x = 0; x < excluded_count; ++x)
        if (excluded[x].start > piece_start && excluded[x].start < piece_end) piece_end = excluded[x].start;
      visit(PhysRange{(piece_start + align_mask) & ~align_mask, piece_end & ~align_mask});
    }
  }
}

}  // namespace

PhysRange largest_free_range(const PhysRange* available, size_t available_count, const PhysRange* excluded,
                             size_t excluded_count, uint64_t floor, uint64_t ceiling, uint64_t alignment) {
  PhysRange best{0, 0};
  for_each_free_piece(available, available_count, excluded, excluded_count, floor, ceiling, alignment,
                      [&](const PhysRange& piece) {
                        if (piece.size() > best.size()) best = piece;
                      });
  return best;
}

size_t free_ranges(const PhysRange* available, size_t available_count, const PhysRange* excluded,
                   size_t excluded_count, uint64_t floor, uint64_t ceiling, uint64_t alignment,
                   PhysRange* out, size_t out_capacity) {
  size_t count = 0;
  if (out_capacity == 0) return 0;
  for_each_free_piece(available, available_count, excluded, excluded_count, floor, ceiling, alignment,
                      [&](const PhysRange& piece) {
                        if (piece.size() < alignment) return;
                        // Full: the new piece replaces the smallest kept one if it is larger.
                        size_t slot = count;
                        if (count == out_capacity) {
                          slot = 0;
                          for (size_t i = 1; i < count; ++i)
                            if (out[i].size() < out[slot].size()) slot = i;
                          if (out[slot].size() >= piece.size()) return;
                        } else {
                          ++count;
                        }
                        out[slot] = piece;
                      });
  // Ascending start (insertion sort: a handful of pieces). Two available entries can yield the same piece
  // when they overlap: drop repeats and overlaps.
  for (size_t i = 1; i < count; ++i)
    for (size_t j = i; j > 0 && out[j].start < out[j - 1].start; --j) {
      const PhysRange t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i) {
    if (kept > 0 && out[i].start < out[kept - 1].end) {
      if (out[i].end > out[kept - 1].end) out[kept - 1].end = out[i].end;
      continue;
    }
    out[kept++] = out[i];
  }
  return kept;
}

size_t append_ranges(PhysRange* out, size_t used, size_t capacity, const PhysRange* ranges, size_t count) {
  for (size_t i = 0; i < count && used < capacity; ++i) out[used++] = ranges[i];
  return used;
}

}  // namespace ett::lib
