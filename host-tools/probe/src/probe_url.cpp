// probe_url.cpp: parses the cable URL: scheme, path and the ?key=value options.
#include "probe_url.h"

namespace ett::probe {

namespace {

host::Expected<ProbeUrl> bad(std::string_view url, const std::string& problem) {
  return host::make_error(host::ErrorKind::Usage, "probe URL '" + std::string(url) + "': " + problem);
}

}  // namespace

host::Expected<ProbeUrl> parse_probe_url(std::string_view url) {
  ProbeUrl parsed;
  const size_t colon = url.find(':');
  if (colon == std::string_view::npos)
    return bad(url, "expected shm:PATH, ivshmem:PATH or ppdev:/dev/parportN");
  const std::string_view scheme = url.substr(0, colon);
  if (scheme == "shm" || scheme == "ivshmem")
    parsed.backend = Backend::SharedMemory;
  else if (scheme == "ppdev")
    parsed.backend = Backend::Ppdev;
  else
    return bad(url, "unknown scheme '" + std::string(scheme) + "' (use shm:, ivshmem: or ppdev:)");

  std::string_view rest = url.substr(colon + 1);
  const size_t question = rest.find('?');
  parsed.path = std::string(rest.substr(0, question));
  if (parsed.path.empty()) return bad(url, "no path after '" + std::string(scheme) + ":'");
  if (question == std::string_view::npos) return parsed;

  std::string_view options = rest.substr(question + 1);
  while (!options.empty()) {
    const size_t amp = options.find('&');
    const std::string_view option = options.substr(0, amp);
    options = amp == std::string_view::npos ? std::string_view{} : options.substr(amp + 1);
    const size_t equals = option.find('=');
    if (equals == std::string_view::npos || equals == 0 || equals + 1 == option.size())
      return bad(url, "option '" + std::string(option) + "' is not key=value");
    const std::string_view key = option.substr(0, equals);
    const std::string_view value = option.substr(equals + 1);
    if (key == "layout") {
      auto layout = host::ProbeLayout::from_name(value);
      if (!layout) return bad(url, "unknown layout '" + std::string(value) + "' (use 2x4, 8x1, 4x2 or 1x8)");
      parsed.layout = *layout;
    } else if (key == "log") {
      parsed.log = std::string(value);
    } else if (key == "pace") {
      if (value != "0" && value != "1") return bad(url, "pace= takes 0 or 1");
      parsed.pace = value == "1";
    } else {
      return bad(url, "unknown option '" + std::string(key) + "' (layout=, log=, pace=)");
    }
  }
  return parsed;
}

}  // namespace ett::probe
