// probe_url.h: the probe cable's URL, "shm:PATH?layout=8x1&log=FILE", parsed into its parts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/probe_layout.h"
#include "common/status.h"

namespace ett::probe {

enum class Backend { SharedMemory, Ppdev };

struct ProbeUrl {
  Backend backend = Backend::SharedMemory;
  std::string path;  // the shm file or the ppdev device node
  host::ProbeLayout layout;
  std::optional<std::string> log;  // log=FILE; nullopt: not in the URL
  bool pace = true;
};

// Errors (ErrorKind::Usage) name the URL and the part that is wrong.
host::Expected<ProbeUrl> parse_probe_url(std::string_view url);

}  // namespace ett::probe
