// units.cpp: parsing sizes and frequencies given on the command line.
#include "common/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace ett::host {

Expected<uint64_t> parse_byte_size(std::string_view text) {
  auto invalid = [&] {
    return make_error(ErrorKind::Usage,
                      fmt::format("invalid size '{}': use bytes or a K/M/G/T suffix, e.g. 64M", text));
  };
  uint64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc{} || end == text.data()) return invalid();
  std::string suffix(end, text.data() + text.size());
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  int shift = 0;
  if (!suffix.empty() && suffix != "b") {
    const std::string units = "kmgt";
    auto unit = units.find(suffix[0]);
    std::string_view rest = std::string_view(suffix).substr(1);
    if (unit == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib")) return invalid();
    shift = 10 * static_cast<int>(unit + 1);
  }
  if (shift > 0 && number > (~uint64_t{0} >> shift)) return invalid();
  return number << shift;
}

Expected<uint64_t> parse_hz(std::string_view text) {
  auto invalid = [&] {
    return make_error(ErrorKind::Usage,
                      fmt::format("invalid frequency '{}': use Hz, e.g. 2400000000, 2.4e9 or 2.4G", text));
  };
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data()) return invalid();
  std::string_view suffix(end, static_cast<size_t>(text.data() + text.size() - end));
  if (suffix.size() >= 2 &&
      (suffix.substr(suffix.size() - 2) == "Hz" || suffix.substr(suffix.size() - 2) == "hz"))
    suffix.remove_suffix(2);
  if (suffix == "k" || suffix == "K")
    value *= 1e3;
  else if (suffix == "M")
    value *= 1e6;
  else if (suffix == "G" || suffix == "g")
    value *= 1e9;
  else if (!suffix.empty())
    return invalid();
  if (!std::isfinite(value) || value < 1 || value > 1e15) return invalid();
  return static_cast<uint64_t>(std::llround(value));
}

}  // namespace ett::host
