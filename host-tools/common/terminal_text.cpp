// terminal_text.cpp: control characters shown as escapes in text output.
#include "common/terminal_text.h"

#include <fmt/format.h>

namespace ett::host {

namespace {

bool is_c0_or_del(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}
// The second byte of a UTF-8 C1 control after 0xC2.
bool is_c1_tail(unsigned char c) {
  return c >= 0x80 && c <= 0x9f;
}

}  // namespace

bool has_control_characters(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_c0_or_del(c)) return true;
    if (c == 0xc2 && i + 1 < text.size() && is_c1_tail(static_cast<unsigned char>(text[i + 1]))) return true;
  }
  return false;
}

std::string escape_control_characters(std::string_view text) {
  if (!has_control_characters(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_c0_or_del(c)) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < text.size() && is_c1_tail(static_cast<unsigned char>(text[i + 1]))) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace ett::host
