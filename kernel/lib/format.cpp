// format.cpp: the console formatter: one pass over the format string, numbers rendered right to left.
#include "lib/format.h"

#include <stdint.h>

namespace ett::lib {

namespace {

class Output {
 public:
  Output(char* out, size_t capacity) : m_out(out), m_capacity(capacity) {}

  void put(char c) {
    if (m_length + 1 < m_capacity) m_out[m_length] = c;
    ++m_length;
  }
  void repeat(char c, size_t count) {
    while (count--) put(c);
  }
  size_t finish() {
    if (m_capacity > 0) m_out[m_length < m_capacity ? m_length : m_capacity - 1] = '\0';
    return m_length;
  }

 private:
  char* m_out;
  size_t m_capacity;
  size_t m_length = 0;
};

struct Spec {
  bool left = false;
  bool zero = false;
  size_t width = 0;
  size_t precision = SIZE_MAX;  // %s only
};

void emit_padded(Output& out, const Spec& spec, const char* text, size_t length, bool negative) {
  const size_t body = length + (negative ? 1 : 0);
  const size_t pad = spec.width > body ? spec.width - body : 0;
  if (!spec.left && !spec.zero) out.repeat(' ', pad);
  if (negative) out.put('-');
  if (!spec.left && spec.zero) out.repeat('0', pad);
  for (size_t i = 0; i < length; ++i) out.put(text[i]);
  if (spec.left) out.repeat(' ', pad);
}

void emit_unsigned(Output& out, const Spec& spec, unsigned long long value, unsigned base, bool upper,
                   bool negative) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char buffer[24];
  size_t length = 0;
  do {
    buffer[sizeof(buffer) - 1 - length++] = digits[value % base];
    value /= base;
  } while (value != 0);
  emit_padded(out, spec, buffer + sizeof(buffer) - length, length, negative);
}

}  // namespace

size_t vformat(char* out_buffer, size_t capacity, const char* format, va_list args) {
  Output out(out_buffer, capacity);
  for (const char* p = format; *p != '\0'; ++p) {
    if (*p != '%') {
      out.put(*p);
      continue;
    }
    const char* start = p++;
    Spec spec;
    for (;; ++p) {
      if (*p == '-')
        spec.left = true;
      else if (*p == '0')
        spec.zero = true;
      else
        break;
    }
    if (*p == '*') {
      const int width = va_arg(args, int);
      spec.left |= width < 0;
      spec.width = static_cast<size_t>(width < 0 ? -width : width);
      ++p;
    } else {
      for (; *p >= '0' && *p <= '9'; ++p) spec.width = spec.width * 10 + static_cast<size_t>(*p - '0');
    }
    if (*p == '.') {
      ++p;
      if (*p == '*') {
        const int precision = va_arg(args, int);
        spec.precision = precision < 0 ? SIZE_MAX : static_cast<size_t>(precision);
        ++p;
      } else {
        spec.precision = 0;
        for (; *p >= '0' && *p <= '9'; ++p)
          spec.precision = spec.precision * 10 + static_cast<size_t>(*p - '0');
      }
    }
    int longs = 0;
    bool size_t_arg = false;
    for (; *p == 'l'; ++p) ++longs;
    if (*p == 'z') {
      size_t_arg = true;
      ++p;
    }

    switch (*p) {
      case 's': {
        const char* text = va_arg(args, const char*);
        if (text == nullptr) text = "(null)";
        size_t length = 0;
        while (length < spec.precision && text[length] != '\0') ++length;
        spec.zero = false;
        emit_padded(out, spec, text, length, false);
        break;
      }
      case 'c': {
        const char c = static_cast<char>(va_arg(args, int));
        spec.zero = false;
        emit_padded(out, spec, &c, 1, false);
        break;
      }
      case 'd':
      case 'i': {
        long long value = size_t_arg   ? static_cast<long long>(va_arg(args, size_t))
                          : longs >= 2 ? va_arg(args, long long)
                          : longs == 1 ? va_arg(args, long)
                                       : va_arg(args, int);
        const bool negative = value < 0;
        const unsigned long long magnitude =
            negative ? 0ULL - static_cast<unsigned long long>(value) : static_cast<unsigned long long>(value);
        emit_unsigned(out, spec, magnitude, 10, false, negative);
        break;
      }
      case 'u':
      case 'x':
      case 'X': {
        const unsigned long long value = size_t_arg   ? va_arg(args, size_t)
                                         : longs >= 2 ? va_arg(args, unsigned long long)
                                         : longs == 1 ? va_arg(args, unsigned long)
                                                      : va_arg(args, unsigned);
        emit_unsigned(out, spec, value, *p == 'u' ? 10 : 16, *p == 'X', false);
        break;
      }
      case '%':
        out.put('%');
        break;
      default:  // unknown or truncated conversion: show it as written
        for (const char* q = start; q <= p && *q != '\0'; ++q) out.put(*q);
        if (*p == '\0') return out.finish();
        break;
    }
  }
  return out.finish();
}

size_t format(char* out, size_t capacity, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const size_t length = vformat(out, capacity, format, args);
  va_end(args);
  return length;
}

}  // namespace ett::lib
