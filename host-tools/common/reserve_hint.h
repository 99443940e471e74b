// reserve_hint.h: room in a vector for a count that is only a hint (a count from the database, which a
// database whose counts lie can make anything).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>

namespace ett::host {

// Past this many elements a hint reserves no more: the vector grows from there.
constexpr uint64_t kReserveHintLimit = uint64_t{1} << 29;

// Reserves room for `count` elements, at most kReserveHintLimit; a reservation the allocator refuses leaves
// the vector to grow, as it would without the hint.
template <class T>
void reserve_hint(std::vector<T>& vector, uint64_t count) {
  try {
    vector.reserve(static_cast<size_t>(std::min(count, kReserveHintLimit)));
  } catch (const std::exception&) {  // std::bad_alloc, std::length_error
  }
}

}  // namespace ett::host
