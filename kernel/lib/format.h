// format.h: a tiny printf-style formatter for the console (no allocation, no C library).
//
// Conversions: %s %c %d %i %u %x %X %% with the length modifiers l, ll and z; flags '-' (left-align) and
// '0' (zero-pad); a width (digits or '*'); a precision for %s (".N" or ".*": at most N characters).
// An unknown conversion is copied to the output as it is.
#pragma once

#include <stdarg.h>
#include <stddef.h>

namespace ett::lib {

// Writes at most capacity - 1 characters and a NUL to `out` (when capacity > 0). Returns the length the
// whole result would have had, like snprintf, so a return value >= capacity means truncation.
size_t vformat(char* out, size_t capacity, const char* format, va_list args);

[[gnu::format(printf, 3, 4)]] size_t format(char* out, size_t capacity, const char* format, ...);

}  // namespace ett::lib
