// text.h: the handful of NUL-terminated string helpers the kernel needs (it has no C library).
#pragma once

#include <stddef.h>

namespace ett::lib {

constexpr size_t text_length(const char* text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  return length;
}

// Copies `text` into `out` (capacity bytes, always NUL-terminated). Returns false if it was truncated.
constexpr bool copy_text(char* out, size_t capacity, const char* text) {
  if (capacity == 0) return text[0] == '\0';
  size_t i = 0;
  for (; i + 1 < capacity && text[i] != '\0'; ++i) out[i] = text[i];
  out[i] = '\0';
  return text[i] == '\0';
}

constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace ett::lib
