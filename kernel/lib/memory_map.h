// memory_map.h: picks the capture buffer: the largest free piece of RAM the firmware reported (i686 kernel),
// or every free piece (x86-64 kernel, which maps them one after another into one virtual range).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace ett::lib {

// A physical address range [start, end).
struct PhysRange {
  uint64_t start;
  uint64_t end;

  constexpr uint64_t size() const { return end > start ? end - start : 0; }
  constexpr bool overlaps(const PhysRange& other) const { return start < other.end && other.start < end; }
};

// The largest `alignment`-aligned piece (start and end both aligned) of any `available` range that lies
// inside [floor, ceiling) and overlaps none of `excluded`. Empty ({0, 0}) when there is none.
// `alignment` must be a power of two.
// The excluded ranges may overlap each other and the available ones, in any order.
PhysRange largest_free_range(const PhysRange* available, size_t available_count, const PhysRange* excluded,
                             size_t excluded_count, uint64_t floor, uint64_t ceiling, uint64_t alignment);

// Every `alignment`-aligned free piece (as for largest_free_range) of at least `alignment` bytes, in
// ascending address order, into `out` (at most `out_capacity`; the smallest pieces are dropped first when
// there are more). Returns the count.
size_t free_ranges(const PhysRange* available, size_t available_count, const PhysRange* excluded,
                   size_t excluded_count, uint64_t floor, uint64_t ceiling, uint64_t alignment,
                   PhysRange* out, size_t out_capacity);

// Appends `count` ranges to `out` (holding `used` of `capacity`); returns the new count. Ranges that do not
// fit are dropped: the caller sizes `out` for every source.
size_t append_ranges(PhysRange* out, size_t used, size_t capacity, const PhysRange* ranges, size_t count);

}  // namespace ett::lib
